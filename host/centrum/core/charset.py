"""The one charset sniffer: which encoding a page's bytes are in, for the renderer, DANA, the peers and labels.

Precedence, first match wins:

1. a byte-order mark (it cannot be wrong about the bytes that follow it);
2. the transport's declaration (HTTP ``Content-Type`` charset, when the caller has one);
3. valid UTF-8 holding non-ASCII bytes: saved pages are often re-encoded to UTF-8 while their ``<meta>`` still
   names the old charset, and legacy text is practically never valid multi-byte UTF-8 by accident, so this
   evidence from the bytes themselves outranks the page's own declaration;
4. the page's declaration: ``<?xml encoding>`` or ``<meta charset>`` / http-equiv in the head;
5. UTF-8 when the bytes are valid UTF-8 (plain ASCII);
6. detection (:func:`detected`, charset-normalizer) for bytes that are neither declared nor UTF-8: a legacy page saved
   without a declaration (GBK, Shift_JIS, windows-1251...), which windows-1252 would turn into mojibake;
7. fallback: windows-1252 (the HTML standard's default), also whenever windows-1252 reads the bytes about as
   cleanly as the detected encoding, so a Western page stays as a browser shows it.

:func:`sniff` answers a web label (what a browser accepts in ``Content-Type``); :func:`codec` maps a label to the
Python codec whose decoder reads what a browser's decoder for that label reads; :func:`decode` never fails.
"""

from __future__ import annotations

import codecs
import re

# Real pages put <meta> after long <link> lists, so the prescan reads further than the HTML standard's 1024 bytes.
HEAD_BYTES = 16384
_META = re.compile(rb"""<meta[^>]{0,512}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{2,40})""", re.I)
_XML = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9_.:-]{2,40})""", re.I)
# The declaration in a serialized page (text), for rewriting it: the prefix up to the label, then the label.
_META_TEXT = re.compile(r"(<meta\b[^>]*?charset\s*=\s*[\"']?)([\w:.-]+)", re.I)
_HEAD_TAG = re.compile(r"<head\b[^>]*>", re.I)

_BOMS = (  # UTF-32 before UTF-16: the UTF-32-LE BOM starts with the UTF-16-LE one
    (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16le"), (codecs.BOM_UTF16_BE, "utf-16be"),
)
# WHATWG Encoding Standard labels whose decoder is a superset of what Python's codec of that name reads.
_WEB_CODECS = {
    "iso-8859-1": "cp1252", "iso8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "l1": "cp1252",
    "us-ascii": "cp1252", "ascii": "cp1252", "windows-1252": "cp1252", "x-cp1252": "cp1252",
    "iso-8859-9": "cp1254", "latin5": "cp1254", "iso-8859-11": "cp874", "tis-620": "cp874",
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "ks_c_5601-1987": "cp949", "euc-kr": "cp949",
    "shift_jis": "cp932", "sjis": "cp932", "x-sjis": "cp932", "big5": "big5hkscs",
}
# A <meta> cannot declare UTF-16 (the decoder could not have read the declaration): WHATWG says utf-8.
_META_UTF16 = frozenset({"utf-16", "utf-16le", "utf-16be", "unicode"})


def codec(label: str | None) -> str | None:
    """Python codec name for a web charset label; None when Python has no decoder for it."""
    if not label:
        return None
    name = label.strip().strip("\"'").lower()
    try:
        return codecs.lookup(_WEB_CODECS.get(name, name)).name
    except LookupError:
        return None


def bom(data: bytes) -> tuple[str, int] | None:
    """(codec, BOM length) when ``data`` starts with a byte-order mark."""
    for mark, enc in _BOMS:
        if data.startswith(mark):
            return enc, len(mark)
    return None


def declared(data: bytes) -> str | None:
    """The label the page itself declares (``<?xml encoding>``, ``<meta charset>``, http-equiv), lower case, when
    Python can decode it."""
    head = data[:HEAD_BYTES]
    m = _XML.search(head) or _META.search(head)
    if not m:
        return None
    label = m.group(1).decode("ascii", "replace").lower()
    if label in _META_UTF16:
        return "utf-8"
    return label if codec(label) else None


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# Detection reads this many bytes from just before the first non-ASCII byte: enough text to tell encodings apart,
# bounded in time however large the page (the ASCII head of scripts and styles says nothing about the encoding).
DETECT_BYTES = 64 * 1024
DETECT_LEAD = 1024
# How much messier (charset-normalizer's chaos, 0 = clean) windows-1252 must read the bytes than the detected encoding
# before the detected one is taken: single-byte Latin encodings read English alike, and a browser reads windows-1252.
DETECT_MARGIN = 0.05
_NON_ASCII = re.compile(rb"[\x80-\xff]")
# charset-normalizer's Python codec names -> the WHATWG label a browser accepts; an encoding that is not on the web
# (cp775, cp852, ...) is never an answer.
_DETECTED = {
    "gb18030": "gb18030", "gb2312": "gbk", "gbk": "gbk", "big5": "big5", "big5hkscs": "big5", "cp950": "big5",
    "cp932": "shift_jis", "shift_jis": "shift_jis", "euc_jp": "euc-jp", "iso2022_jp": "iso-2022-jp",
    "cp949": "euc-kr", "euc_kr": "euc-kr", "koi8_r": "koi8-r", "koi8_u": "koi8-u", "cp866": "ibm866",
    "mac_cyrillic": "x-mac-cyrillic", "cp874": "windows-874",
    **{f"cp125{i}": f"windows-125{i}" for i in range(9)},
    **{f"iso8859_{i}": f"iso-8859-{i}" for i in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)},
}


def detected(data: bytes) -> str | None:
    """The web label of the legacy encoding ``data`` is in, when detection finds one that reads it clearly better than
    windows-1252 (None: windows-1252 it is). For bytes that are neither declared nor valid UTF-8 (:func:`sniff`)."""
    first = _NON_ASCII.search(data)
    if first is None:
        return None
    start = max(0, first.start() - DETECT_LEAD)
    sample = data[start:start + DETECT_BYTES]
    from charset_normalizer import from_bytes  # only here: the native host never sniffs bytes

    best = from_bytes(sample).best()
    label = _DETECTED.get(best.encoding) if best is not None else None
    if best is None or label is None or label == "windows-1252":
        return None
    western = from_bytes(sample, cp_isolation=["cp1252"]).best()
    if western is not None and western.chaos < best.chaos + DETECT_MARGIN:
        return None
    return label


def uses_detection(data: bytes, http: str | None = None) -> bool:
    """Whether :func:`sniff` reads ``data`` by detection (a legacy encoding other than windows-1252)."""
    return sniff(data, http) != _sniff_declared(data, http)


def _sniff_declared(data: bytes, http: str | None) -> str:
    """:func:`sniff` without the detection step (what the sniffer answered before it had one)."""
    b = bom(data)
    if b:
        return b[0]
    if http and codec(http):
        return http.strip().strip("\"'").lower()
    utf8 = _valid_utf8(data)
    if utf8 and not data.isascii():
        return "utf-8"
    return declared(data) or ("utf-8" if utf8 else "windows-1252")


def sniff(data: bytes, http: str | None = None) -> str:
    """The web label to read ``data`` with (see the module docstring for the order)."""
    label = _sniff_declared(data, http)
    if label == "windows-1252" and not (http and codec(http)) and declared(data) is None and bom(data) is None:
        return detected(data) or label
    return label


def decode(data: bytes, http: str | None = None) -> str:
    """Bytes of an HTML page -> text, read as :func:`sniff` decides; undecodable bytes become U+FFFD."""
    b = bom(data)
    if b:
        return data[b[1]:].decode(b[0], "replace")
    return data.decode(codec(sniff(data, http)) or "utf-8", "replace")


def declare_utf8(html: str) -> str:
    """A serialized page that will be written as UTF-8, its own charset declaration saying so."""
    html, count = _META_TEXT.subn(lambda m: m.group(1) + "utf-8", html)
    if count == 0:
        html = _HEAD_TAG.sub(lambda m: m.group(0) + '<meta charset="utf-8">', html, count=1)
    return html
