"""Scrubbing secrets from anything the CLI writes down (traffic log, replay, summaries)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[REDACTED]"
# Field names whose values are secrets wherever they appear (headers, params, settings).
SECRET_NAME = re.compile(r"api[_-]?key|authorization|secret|password|cookie|token$", re.I)
# Environment variables holding secrets: their values are scrubbed from every string.
# (pydantic-settings reads names case-insensitively, so must this.)
SECRET_ENV = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD|SECRET_ACCESS_KEY)$", re.I)
# Shapes of credentials even when they did not come from this process's environment.
SECRET_SHAPES = re.compile(
    r"(?i:\b(?:bearer|basic)\s+)[^\s\"',;]+"
    r"|(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"  # user:password@ in URLs
    r"|\bsk-[A-Za-z0-9_\-]{12,}"
    r"|\btvly-[A-Za-z0-9_\-]{8,}"
    r"|\blsv2_[A-Za-z0-9_]{12,}"
)
# Short values ("x", "1") are not worth scrubbing and would mangle ordinary text.
MIN_SECRET_CHARS = 6


class Redactor:
    """Replaces secret values in nested JSON-like data; built once per run from the env."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        values = {v for k, v in env.items() if SECRET_ENV.search(k) and len(v) >= MIN_SECRET_CHARS}
        # Longest first, so a key that contains another is replaced whole.
        self._values = sorted(values, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self._values:
            value = value.replace(secret, REDACTED)
        return SECRET_SHAPES.sub(_replace_shape, value)

    def __call__(self, data: Any) -> Any:
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, Mapping):
            return {
                key: REDACTED if SECRET_NAME.search(str(key)) and value else self(value)
                for key, value in data.items()
            }
        if isinstance(data, list | tuple):
            return [self(item) for item in data]
        if data is None or isinstance(data, bool | int | float):
            return data
        # Anything else (an exception, a path) is written as text: scrub that text.
        return self.text(str(data))


def _replace_shape(match: re.Match[str]) -> str:
    scheme = match.group(0).split(maxsplit=1)[0]
    if scheme.lower() in ("bearer", "basic") and scheme != match.group(0):
        return f"{scheme} {REDACTED}"
    return REDACTED
