"""What an answer becomes: the clean tree, text, Markdown, HTML and JSON (``centrum extract -f``, the reader)."""
