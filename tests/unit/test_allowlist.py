"""One allow-list for the reader view and the host's clean HTML / Markdown: ``extension/src/allowlist.json``.

The host reads the data file (packaged through the ``centrum/assets/allowlist.json`` link). The reader's
``extension/src/clean.js`` still spells the same lists in code (moving it to read the file is extension work,
issue #24); until it does, this test holds the two equal, so neither can drift. The e2e test
``tests/e2e/test_outputs.py::test_reader_and_host_keep_the_same_elements`` compares their outputs on fixture pages.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from centrum.output.outputs import ALLOWLIST_PATH, allowlist

REPO = Path(__file__).resolve().parents[2]
CLEAN_JS = (REPO / "extension" / "src" / "clean.js").read_text(encoding="utf-8")
DATA = json.loads((REPO / "extension" / "src" / "allowlist.json").read_text(encoding="utf-8"))


def _js_set(name: str) -> set[str]:
    m = re.search(rf"const {name} = new Set\(\[(.*?)\]\);", CLEAN_JS, re.S)
    assert m, f"clean.js no longer defines {name} as a Set literal"
    return set(re.findall(r'"([^"]+)"', m.group(1)))


def _js_regex(name: str) -> str:
    m = re.search(rf"const {name} = /(.*?)/i;", CLEAN_JS)
    assert m, f"clean.js no longer defines {name} as a regex literal"
    return m.group(1)


def test_package_reads_the_extension_data_file() -> None:
    assert ALLOWLIST_PATH.resolve() == (REPO / "extension" / "src" / "allowlist.json").resolve()
    allow = allowlist()
    assert allow.keep == set(DATA["keep"]) and allow.drop == set(DATA["drop"])
    assert not allow.keep & allow.drop


def test_clean_js_lists_equal_the_data_file() -> None:
    assert _js_set("KEEP") == set(DATA["keep"])
    assert _js_set("DROP") == set(DATA["drop"])
    assert _js_set("ATTRS") == {a for names in DATA["attributes"].values() for a in names}
    assert _js_regex("SAFE_LINK") == DATA["safe_link"]
    assert _js_regex("SAFE_IMAGE") == DATA["safe_image"]
    m = re.search(r"const MAX_NODES = (\d+);", CLEAN_JS)
    assert m and int(m.group(1)) == DATA["max_nodes"]


def test_per_tag_attributes_match_clean_js() -> None:
    # clean.js's attributes(): the tags it gives attributes of their own, and the ones every tag may carry.
    assert re.search(r'for \(const name of \["lang", "dir", "title"\]\)', CLEAN_JS)
    assert DATA["attributes"]["*"] == ["lang", "dir", "title"]
    for tag in ("a", "img", "time", "details", "ol"):
        assert f'tag === "{tag}"' in CLEAN_JS, tag
    assert 'tag === "td" || tag === "th"' in CLEAN_JS
    assert set(DATA["attributes"]) == {"*", "a", "img", "td", "th", "time", "details", "ol"}


def _js_list(name: str) -> list[str]:
    m = re.search(rf"const {name} = \[(.*?)\];", CLEAN_JS, re.S)
    assert m, f"clean.js no longer defines {name} as an array literal"
    return re.findall(r'"([^"]+)"', m.group(1))


def test_lazy_image_attributes_are_shared() -> None:
    from centrum.output.outputs import LAZY_SRC, LAZY_SRCSET, PLACEHOLDER_DATA_URI

    assert _js_list("LAZY_SRC") == DATA["lazy_src"] == list(LAZY_SRC)
    assert _js_list("LAZY_SRCSET") == DATA["lazy_srcset"] == list(LAZY_SRCSET)
    m = re.search(r"const PLACEHOLDER_DATA_URI = (\d+);", CLEAN_JS)
    assert m and int(m.group(1)) == DATA["placeholder_data_uri"] == PLACEHOLDER_DATA_URI


def test_thread_words_are_shared() -> None:
    # How threads read (issue #44): clean.js's word lists and limits are allowlist.json's "thread", the host's too.
    thread = DATA["thread"]
    for key in ("drop", "drop_whole", "card", "card_whole", "meta", "quote", "name", "actions", "inline"):
        # The JS literals spell a backslash as two, as the JSON does.
        assert [w.replace("\\\\", "\\") for w in _js_list(f"THREAD_{key.upper()}")] == thread[key], key
    for key in ("max_card_chars", "max_meta_chars", "max_name_chars"):
        m = re.search(rf"const {key.upper()} = (\d+);", CLEAN_JS)
        assert m and int(m.group(1)) == thread[key], key
    m = re.search(r"const MAX_LAZY_WRAPPED = (\d+);", CLEAN_JS)
    assert m and int(m.group(1)) == DATA["max_lazy_wrapped"] == allowlist().max_lazy_wrapped
    words = allowlist().thread
    assert words.quote.search("bbcode-quote") and not words.quote.search("quote-author")
    assert words.card.search("message-user") and not words.card.search("message-userExtras")
    assert words.card.search("post user") and not words.card.search("user-content-install")  # a GitHub heading id
    assert words.drop.search("signature") and not words.drop.search("member-signature")  # javadoc's
    assert not words.drop.search("sig sig-object py")  # Sphinx's signature of a documented function
    assert words.actions.match(" Reply ") and words.actions.match("#12") and not words.actions.match("Reply to Ana")
