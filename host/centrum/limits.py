"""Every limit the host enforces on a request, in one place.

host/PROTOCOL.md's "Limits" table lists the same names and values (tests/unit/test_protocol_doc.py compares them),
and each limit is checked before the work it bounds starts, so that an oversized or hostile request gets an error
answer naming the limit instead of exhausting memory or the stack. This module imports nothing heavy: the host
reads it on every cold start.
"""

from __future__ import annotations

MIB = 1024 * 1024

# Browser -> host: Chrome's documented maximum message size. A larger frame is answered E_TOO_LARGE (skipped).
REQUEST_BYTES = 64 * MIB
# A request's `id` and `type` strings: both are echoed in the answer, the id in every chunk envelope, which must
# stay under message_bytes. An integer id must be exact in JavaScript (|id| < 2^53). Answered E_REQUEST.
ID_CHARS = 256
# JSON nesting of a request (objects and arrays). A snapshot request nests 4 deep and a label 5; the cap keeps
# the decoder's recursion (Python's limit is ~1000 frames) far away. Answered E_JSON, checked before decoding.
JSON_DEPTH = 32
# Snapshot sizes (E_SNAPSHOT), checked on the array lengths before any column is converted.
ELEMENTS = 2_000_000
TEXT_NODES = 4_000_000
# Algorithm parameters (E_PARAMS): a string value's length and a list value's item count. Real values are a tag
# list or a preset name; the caps keep a parameter from becoming a second payload.
PARAM_STRING_CHARS = 1_000
PARAM_LIST_ITEMS = 1_000
# Host -> browser: a response's JSON beyond this loses its debug payload ({"trimmed": true}); every framed
# message (a chunk) stays under the browsers' 1 MB cap.
RESPONSE_BYTES = 16 * MIB
MESSAGE_BYTES = 1 * MIB

# name -> value, the names PROTOCOL.md uses.
LIMITS: dict[str, int] = {
    "request_bytes": REQUEST_BYTES,
    "json_depth": JSON_DEPTH,
    "id_chars": ID_CHARS,
    "elements": ELEMENTS,
    "text_nodes": TEXT_NODES,
    "param_string_chars": PARAM_STRING_CHARS,
    "param_list_items": PARAM_LIST_ITEMS,
    "response_bytes": RESPONSE_BYTES,
    "message_bytes": MESSAGE_BYTES,
}
