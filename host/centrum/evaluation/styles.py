"""Stylesheets on vs off on the same pages (``centrum eval --styles both``): every extractor side by side.

Only pages rendered in both passes are compared, so each difference is the same page laid out with and without
its CSS. Per extractor: the mean per-page F1 of each pass, the paired difference with a 95 % interval (normal
approximation over pages), how many answers were empty or failed, and how many pages moved by more than 0.05.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

MOVED = 0.05  # per-page F1 change counted as a page that moved


def _by_page(pages: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(p["dataset"], p["id"]): p for p in pages if p.get("render_class") != "unrendered"}


def compare(pages_on: Sequence[dict[str, Any]], pages_off: Sequence[dict[str, Any]],
            extractors: Sequence[str]) -> dict[str, Any]:
    on, off = _by_page(pages_on), _by_page(pages_off)
    keys = sorted(set(on) & set(off))
    rows = {}
    for e in extractors:
        f_on, f_off, empty_on, empty_off = [], [], 0, 0
        for k in keys:
            r_on = next((r for r in on[k]["rows"] if r["extractor"] == e), None)
            r_off = next((r for r in off[k]["rows"] if r["extractor"] == e), None)
            if r_on is None or r_off is None:
                continue
            f_on.append(float(r_on["f1"]))
            f_off.append(float(r_off["f1"]))
            empty_on += bool(r_on["failure"])
            empty_off += bool(r_off["failure"])
        if not f_on:
            continue
        a, b = np.array(f_on), np.array(f_off)
        d = a - b
        half = 1.96 * float(d.std(ddof=1)) / np.sqrt(len(d)) if len(d) > 1 else 0.0
        rows[e] = {"pages": len(d), "f1_on": float(a.mean()), "f1_off": float(b.mean()), "diff": float(d.mean()),
                   "ci95": half, "empty_on": empty_on, "empty_off": empty_off,
                   "moved": int((np.abs(d) > MOVED).sum())}
    classes = {"on": dict(Counter(on[k]["render_class"] for k in keys)),
               "off": dict(Counter(off[k]["render_class"] for k in keys))}
    return {"pages": len(keys), "render_classes": classes, "extractors": rows}


def table(result: dict[str, Any]) -> str:
    head = ("| extractor | pages | F1 styles on | F1 styles off | on - off (95 % CI) | empty/failed on | "
            "empty/failed off | pages moved > 0.05 |")
    lines = [head, "|" + "---|" * 8]
    for e, r in sorted(result["extractors"].items(), key=lambda kv: -kv[1]["f1_on"]):
        lines.append(f"| {e} | {r['pages']} | {r['f1_on']:.3f} | {r['f1_off']:.3f} | {r['diff']:+.3f} "
                     f"(± {r['ci95']:.3f}) | {r['empty_on']} | {r['empty_off']} | {r['moved']} |")
    return "\n".join(lines)


def write_comparison(out: Path, pages_on: Sequence[dict[str, Any]], pages_off: Sequence[dict[str, Any]],
                     extractors: Sequence[str]) -> str:
    """Write ``styles.md`` and ``styles.json`` to ``out``; returns the Markdown table."""
    result = compare(pages_on, pages_off, extractors)
    md = table(result)
    cls = result["render_classes"]
    text = (f"# Stylesheets on vs off\n\n{result['pages']} pages rendered in both passes. Render classes with "
            f"stylesheets on: {cls['on']}; off: {cls['off']}. Mean per-page F1 (text gold: token shingles; "
            "snippet gold: snippet F1); difference paired by page.\n\n" + md + "\n")
    (out / "styles.md").write_text(text, encoding="utf-8")
    (out / "styles.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    return md
