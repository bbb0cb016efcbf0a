"""The native-messaging host: framing, the request guard and handlers, warm-up, the launcher install, the
parameter schema of the extension's options page."""
