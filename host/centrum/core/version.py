"""The package's one version: `centrum --version`, the host's ping and the extension's manifest (a test checks)."""

__version__ = "0.1.0"
