"""Tokenizers for the evaluation metrics.

``fair`` (the default) is :func:`centrum.core.textmetrics.tokens`: words for spaced scripts, one token per character for
CJK/Thai and other unspaced scripts, punctuation dropped, case kept. It is shared with the algorithms so that "a
word" means the same everywhere; it is *not* re-implemented here.

``aeb`` is the tokenizer of scrapinghub's article-extraction-benchmark ``evaluate.py`` (``re.findall(r"\\w+")``,
case kept). Choose it to reproduce the benchmark's published numbers exactly; on CJK text it makes one token of a
whole sentence, which is why it is not the default.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..core.textmetrics import tokens as fair

# evaluate.py compiles \w+ with IGNORECASE, which does not change what findall returns: case is kept.
_AEB_TOKEN = re.compile(r"\w+", re.UNICODE)


def aeb(text: str) -> list[str]:
    """Tokens as scrapinghub's ``evaluate.py`` ``_tokenize``: every run of word characters."""
    return _AEB_TOKEN.findall(text or "")


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {"fair": fair, "aeb": aeb}


def get(name: str) -> Callable[[str], list[str]]:
    try:
        return TOKENIZERS[name]
    except KeyError:
        raise ValueError(f"unknown tokenizer {name!r} (known: {', '.join(TOKENIZERS)})") from None
