"""The CLI's redactor (traffic log, replay, summaries, error lines): the shared one."""

from deep_research.secrets import REDACTED, Redactor, redact, scrub

__all__ = ["REDACTED", "Redactor", "redact", "scrub"]
