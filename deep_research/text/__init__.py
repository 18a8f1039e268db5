"""Text and its safety: URLs, size limits and cuts, control codes, secrets redaction, and the
extraction of a page's main text (web pages and the library's HTML alike)."""
