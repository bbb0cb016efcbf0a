"""``centrum batch``: main content of whole crawls (WARC files, folders of pages, URL lists), a row per record.

- :mod:`.inputs`: records as small tasks with their provenance and status; WARC indexing; the one reader from a
  record to its page (``read_page``, decoded by ``centrum.core.charset``).
- :mod:`.worker`: one worker = one headless Chromium + the algorithms -> one row per record (no Ray import).
- :mod:`.engine`: what both engines share (``Driver``: exactly-once rows, accounting, summary) and the Ray engine.
- :mod:`.local`: the local engine, worker processes on this machine without Ray (the default without --address).
- :mod:`.shards`: Parquet/JSONL/Markdown shards written whole, by rows or seconds; what ``--resume`` reads back.

Ray is the optional ``batch`` extra (``pip install 'centrum[batch]'``; pyarrow, for the shards, is a core
dependency), needed only by the Ray engine; nothing here is imported by ``import centrum``.
"""
