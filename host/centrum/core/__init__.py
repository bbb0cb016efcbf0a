"""The core every part stands on: the snapshot and its tree toolkit, configs, results and traces, limits, the
charset sniffer, raw HTML helpers, page metadata, paths, extras and the renderer (a browser driver)."""
