"""The extension's own strings come from ``extension/_locales`` (English and French): every key the code, the
pages and the manifest use is in both languages, with the same substitutions, and no language has keys nobody
uses."""

from __future__ import annotations

import json
import re
from pathlib import Path

EXTENSION = Path(__file__).resolve().parents[2] / "extension"
LANGS = ("en", "fr")


def messages(lang: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = json.loads((EXTENSION / "_locales" / lang / "messages.json").read_text("utf-8"))
    return out


def used_keys() -> set[str]:
    keys: set[str] = set()
    for path in (EXTENSION / "src").rglob("*"):
        if path.suffix == ".js":
            keys |= set(re.findall(r"\bt\(\s*\"([A-Za-z0-9_]+)\"", path.read_text("utf-8")))
            # keys chosen at run time: written as string literals in a table or a conditional
            keys |= set(re.findall(r"\"((?:error|doubt|optionsShortcuts)[A-Z][A-Za-z]+)\"", path.read_text("utf-8")))
        elif path.suffix == ".html":
            keys |= set(re.findall(r'data-i18n="([A-Za-z0-9_]+)"', path.read_text("utf-8")))
    keys |= set(re.findall(r"__MSG_([A-Za-z0-9_]+)__", (EXTENSION / "manifest.json").read_text("utf-8")))
    return keys


def test_every_used_key_is_in_every_language_and_none_is_unused() -> None:
    used = used_keys()
    assert len(used) > 40
    for lang in LANGS:
        known = set(messages(lang))
        assert used - known == set(), (lang, used - known)
        assert known - used == set(), (lang, known - used)


def test_languages_have_the_same_substitutions_and_real_translations() -> None:
    en, fr = messages("en"), messages("fr")
    assert set(en) == set(fr)
    for key in en:
        assert re.findall(r"\$\d", en[key]["message"]) == re.findall(r"\$\d", fr[key]["message"]), key
        assert fr[key]["message"].strip()
    assert sum(en[k]["message"] != fr[k]["message"] for k in en) > 0.9 * len(en)


def test_manifest_name_and_description_are_localized() -> None:
    manifest = json.loads((EXTENSION / "manifest.json").read_text("utf-8"))
    assert manifest["default_locale"] == "en"
    assert manifest["name"] == "__MSG_extName__" and manifest["description"] == "__MSG_extDescription__"
    assert all(c["description"].startswith("__MSG_") for c in manifest["commands"].values())
