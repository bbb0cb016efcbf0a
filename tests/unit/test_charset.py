"""centrum.charset: the one sniffer's precedence (BOM > HTTP > valid UTF-8 > the page's declaration > fallback)."""

import codecs

from centrum import charset


def test_bom_wins_over_everything() -> None:
    text = "<p>мир</p>"
    assert charset.sniff(codecs.BOM_UTF8 + text.encode(), "iso-8859-1") == "utf-8"
    assert charset.decode(codecs.BOM_UTF8 + text.encode(), "iso-8859-1") == text
    assert charset.decode(codecs.BOM_UTF16_LE + text.encode("utf-16-le")) == text
    assert charset.decode(codecs.BOM_UTF32_LE + text.encode("utf-32-le")) == text  # not read as UTF-16-LE


def test_http_declaration_beats_the_page() -> None:
    assert charset.sniff(b'<meta charset="koi8-r"><p>x</p>', "ISO-8859-1") == "iso-8859-1"
    assert charset.sniff("<p>café</p>".encode("latin-1"), "windows-1252") == "windows-1252"
    assert charset.sniff(b"<p>x</p>", "no-such-charset") == "utf-8"  # an unknown transport name is ignored


def test_valid_utf8_beats_a_stale_meta_and_meta_beats_the_fallback() -> None:
    assert charset.sniff(b'<meta charset="iso-8859-1"><p>caf\xc3\xa9') == "utf-8"  # re-saved as UTF-8
    assert charset.sniff(b'<meta charset="iso-8859-1"><p>caf\xe9') == "iso-8859-1"
    assert charset.decode(b'<meta charset="iso-8859-1"><p>\x93caf\xe9\x94') == '<meta charset="iso-8859-1"><p>“café”'
    assert charset.sniff(b'<meta charset="shift_jis"><p>plain ascii') == "shift_jis"  # ASCII is no evidence
    fa = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1256"><p>سلام</p>'
    assert charset.decode(fa.encode("cp1256")) == fa
    xml = '<?xml version="1.0" encoding="koi8-r"?><p>мир</p>'
    assert charset.decode(xml.encode("koi8-r")) == xml
    # A <meta> cannot declare UTF-16 (it could not have been read): UTF-8, as the Encoding Standard says.
    assert charset.sniff(b'<meta charset="utf-16"><p>x\xff</p>') == "utf-8"
    late = b"<head>" + b"<link rel=x>" * 1000 + b'<meta charset="cp1251"><p>\xec\xe8\xf0'
    assert charset.decode(late).endswith("мир")  # the prescan reads past the standard's 1024 bytes


def test_fallback_is_utf8_when_valid_else_windows_1252() -> None:
    assert charset.sniff(b"<p>plain</p>") == "utf-8"
    assert charset.sniff(b"<p>caf\xe9") == "windows-1252"
    assert charset.decode(b"<p>caf\xe9") == "<p>café"
    assert charset.decode(b'<meta charset="utf-8"><p>bad \xff byte') == '<meta charset="utf-8"><p>bad \ufffd byte'


def test_codec_maps_web_labels_to_superset_decoders() -> None:
    assert charset.codec("ISO-8859-1") == "cp1252"
    assert charset.codec("shift_jis") == "cp932"
    assert charset.codec("nonsense") is None and charset.codec(None) is None


def test_declare_utf8_rewrites_or_adds_the_declaration() -> None:
    assert charset.declare_utf8('<head><meta charset="koi8-r"></head>') == '<head><meta charset="utf-8"></head>'
    added = '<head><meta charset="utf-8"><title>t</title></head>'
    assert charset.declare_utf8("<head><title>t</title></head>") == added
