"""Native-messaging framing: a 4-byte length in native byte order, then that many bytes of UTF-8 JSON.

Written with the standard library instead of the PyPI ``nativemessaging`` package: that package calls
``sys.exit`` on EOF, cannot tell a clean EOF from a truncated header, and knows nothing of the browsers' 1 MB cap
on host -> browser messages. Here a clean EOF returns ``None``, anything truncated or absurd raises
:class:`FrameError`, and :func:`chunk_response` splits a response body into messages that each fit under the cap.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from typing import IO, Any

from ..core import limits

# "=I": native byte order, standard 4-byte size (Chrome and Firefox both use the host's byte order).
_HEADER = struct.Struct("=I")
# Browser -> host: Chrome's documented limit is 64 MiB; anything larger is a corrupt or hostile header.
MAX_REQUEST_BYTES = limits.REQUEST_BYTES
# Host -> browser: both browsers reject messages over 1 MB (1024*1024 bytes); keep margin for the envelope.
MAX_MESSAGE_BYTES = limits.MESSAGE_BYTES
CHUNK_DATA_BYTES = 768 * 1024


# A header above this is not a message at all (corrupt stream): its "body" is not skipped.
MAX_SKIP_BYTES = 1024 * 1024 * 1024


class FrameError(IOError):
    """A frame that cannot be read: truncated header or body, or an impossible length."""


class FrameTooLarge(FrameError):
    """Header announces more than the limit. ``skipped`` is True when its body was read and discarded, so the
    stream is still aligned on the next frame."""

    def __init__(self, message: str, length: int, skipped: bool) -> None:
        super().__init__(message)
        self.length = length
        self.skipped = skipped


def _read_exact(stream: IO[bytes], n: int) -> bytes:
    parts: list[bytes] = []
    got = 0
    while got < n:
        # read1/read may return short counts on pipes; loop until n bytes or EOF.
        part = stream.read(n - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _skip(stream: IO[bytes], n: int) -> bool:
    """Discard ``n`` bytes in bounded pieces (never holding an oversized body in memory); False on early EOF."""
    while n > 0:
        part = stream.read(min(n, 1 << 20))
        if not part:
            return False
        n -= len(part)
    return True


def read_frame(stream: IO[bytes], max_bytes: int = MAX_REQUEST_BYTES) -> bytes | None:
    """Read one frame's body; ``None`` on clean EOF (no byte of a header was read)."""
    header = _read_exact(stream, _HEADER.size)
    if not header:
        return None
    if len(header) < _HEADER.size:
        raise FrameError(f"truncated length header ({len(header)} of 4 bytes)")
    (length,) = _HEADER.unpack(header)
    if length > max_bytes:
        skipped = length <= MAX_SKIP_BYTES and _skip(stream, length)
        raise FrameTooLarge(f"message of {length} bytes exceeds the limit of {max_bytes} bytes", length, skipped)
    body = _read_exact(stream, length)
    if len(body) < length:
        raise FrameError(f"truncated body ({len(body)} of {length} bytes)")
    return body


def read_message(stream: IO[bytes], max_bytes: int = MAX_REQUEST_BYTES) -> Any:
    """Read and decode one JSON message; ``None`` on clean EOF. Raises ``FrameError`` or ``ValueError`` (JSON)."""
    body = read_frame(stream, max_bytes)
    if body is None:
        return None
    return json.loads(body.decode("utf-8"))


def to_utf8(json_text: str) -> bytes:
    """UTF-8 bytes of JSON text that may hold lone surrogates (a request's ``"\\ud800"`` decodes to one).

    Strict UTF-8 cannot encode them, and writing an answer must never raise; inside JSON text they can only sit in
    strings, where ``backslashreplace`` writes exactly the JSON escape ``\\ud800`` they came from.
    """
    return json_text.encode("utf-8", "backslashreplace")


def encode_message(obj: Any) -> bytes:
    body = to_utf8(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
    return _HEADER.pack(len(body)) + body


def write_message(stream: IO[bytes], obj: Any) -> None:
    stream.write(encode_message(obj))
    stream.flush()


def chunk_response(msg_id: Any, body: str, data_bytes: int = CHUNK_DATA_BYTES) -> Iterator[dict[str, Any]]:
    """Split a response body (JSON text) into chunk messages (PROTOCOL.md "Response"), each under 1 MB framed.

    Each slice is measured after JSON escaping (quotes double, control characters grow to 6 bytes, non-ASCII to
    up to 4 UTF-8 bytes) and shrunk until it fits ``data_bytes``, so the cap holds for any text.
    """
    pieces: list[str] = []
    pos, step = 0, data_bytes
    while pos < len(body):
        piece = body[pos:pos + step]
        size = len(to_utf8(json.dumps(piece, ensure_ascii=False)))
        if size > data_bytes:
            # Shrink proportionally (with margin) and retry; at most a few rounds since size/char <= 6.
            step = max(1, len(piece) * data_bytes // size - 16)
            continue
        pieces.append(piece)
        pos += len(piece)
        step = data_bytes
    if not pieces:
        pieces = [""]
    for k, piece in enumerate(pieces):
        yield {"v": 1, "id": msg_id, "chunk": k, "chunks": len(pieces), "data": piece}


def read_response(stream: IO[bytes]) -> tuple[Any, int]:
    """The client side of :func:`chunk_response`: read chunk messages until the last one and parse the joined body.

    Returns ``(response, bytes read)``; raises :class:`FrameError` when the stream ends first."""
    parts: list[str] = []
    received = 0
    while True:
        frame = read_frame(stream)
        if frame is None:
            raise FrameError("the host closed its output before the last chunk of an answer")
        received += len(frame) + 4
        chunk = json.loads(frame)
        parts.append(chunk["data"])
        if chunk["chunk"] + 1 >= chunk["chunks"]:
            return json.loads("".join(parts)), received
