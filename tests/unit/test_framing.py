"""Native-messaging framing: EOF, truncation, limits, chunking and byte order (centrum.native.framing)."""

from __future__ import annotations

import io
import json
import struct
import sys

import pytest

from centrum.native.framing import (
    MAX_MESSAGE_BYTES,
    FrameError,
    FrameTooLarge,
    chunk_response,
    encode_message,
    read_frame,
    read_message,
    write_message,
)


def test_round_trip_and_clean_eof() -> None:
    buf = io.BytesIO()
    write_message(buf, {"type": "ping", "id": "r1", "text": "日本語 ✓"})
    write_message(buf, [1, 2])
    buf.seek(0)
    assert read_message(buf) == {"type": "ping", "id": "r1", "text": "日本語 ✓"}
    assert read_message(buf) == [1, 2]
    assert read_message(buf) is None  # clean EOF: no exception, no sys.exit
    assert read_message(buf) is None


def test_native_byte_order() -> None:
    frame = encode_message({"a": 1})
    body = b'{"a":1}'
    assert frame[4:] == body
    expected = len(body).to_bytes(4, sys.byteorder)
    assert frame[:4] == expected
    # And the reader uses the same order: a header written in the *other* order is a different length.
    other = "big" if sys.byteorder == "little" else "little"
    swapped = len(body).to_bytes(4, other) + body
    with pytest.raises(FrameError):
        read_frame(io.BytesIO(swapped))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_truncated_header(n: int) -> None:
    with pytest.raises(FrameError, match="truncated length header"):
        read_message(io.BytesIO(b"\x05\x00\x00\x00"[:n]))


def test_truncated_body() -> None:
    data = struct.pack("=I", 10) + b'{"a":'
    with pytest.raises(FrameError, match=r"truncated body \(5 of 10 bytes\)"):
        read_message(io.BytesIO(data))


def test_too_large_is_skipped_and_stream_stays_aligned() -> None:
    data = struct.pack("=I", 100) + b"x" * 100 + encode_message({"next": True})
    stream = io.BytesIO(data)
    with pytest.raises(FrameTooLarge) as info:
        read_message(stream, max_bytes=50)
    assert info.value.skipped and info.value.length == 100
    assert read_message(stream, max_bytes=50) == {"next": True}


def test_impossible_length_is_not_skipped() -> None:
    stream = io.BytesIO(b"\xff\xff\xff\xff" + encode_message({"next": True}))
    with pytest.raises(FrameTooLarge) as info:
        read_message(stream)
    assert not info.value.skipped
    assert read_message(stream) == {"next": True}


def test_invalid_json_raises_value_error() -> None:
    with pytest.raises(ValueError):
        read_message(io.BytesIO(struct.pack("=I", 3) + b"{x}"))
    with pytest.raises(ValueError):
        read_message(io.BytesIO(struct.pack("=I", 2) + b"\xff\xfe"))


@pytest.mark.parametrize("kind", ["ascii", "quotes", "control", "cjk", "emoji"])
def test_oversized_reply_is_chunked_under_the_cap(kind: str) -> None:
    unit = {"ascii": "abcd", "quotes": '"\\"\\', "control": "\x01\x02\n\t", "cjk": "日本語文", "emoji": "😀x😀y"}[kind]
    body = json.dumps({"status": "ok", "result": {"text": unit * 700_000}}, ensure_ascii=False)
    chunks = list(chunk_response("r9", body))
    assert len(chunks) > 1
    for k, c in enumerate(chunks):
        assert c["chunk"] == k and c["chunks"] == len(chunks) and c["id"] == "r9"
        assert len(encode_message(c)) < MAX_MESSAGE_BYTES
    assert "".join(c["data"] for c in chunks) == body
    assert json.loads("".join(c["data"] for c in chunks))["result"]["text"] == unit * 700_000


def test_small_reply_is_one_chunk() -> None:
    chunks = list(chunk_response(None, '{"status":"ok"}'))
    assert chunks == [{"v": 1, "id": None, "chunk": 0, "chunks": 1, "data": '{"status":"ok"}'}]
