"""Centrum: main-content extraction on live rendered DOM snapshots."""

__version__ = "0.1.0"
