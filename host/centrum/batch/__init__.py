"""``centrum batch``: main content of whole crawls (WARC files, folders of pages, URL lists) on Ray.

- :mod:`.inputs`: records as small tasks; WARC indexing and archived responses (fastwarc).
- :mod:`.worker`: one worker = one headless Chromium + the algorithms -> one row per record (no Ray import).
- :mod:`.engine`: the Ray actor pool with a bounded window, worker-death re-runs, exactly-once rows.
- :mod:`.shards`: Parquet/JSONL shards written whole; what ``--resume`` reads back.

Ray is the optional ``batch`` extra (``pip install 'centrum[batch]'``; pyarrow, for the shards, is a core
dependency); nothing here is imported by ``import centrum``.
"""
