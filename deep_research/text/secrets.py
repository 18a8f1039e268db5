"""One redactor for every place text leaves the process: secrets by value, name and shape.

Model servers and search APIs may echo the credentials they were sent in their error text,
and from there the text would reach progress lines, checkpoints, reports, traces and the
prompts of another server. Everything that writes text out passes it through here: error
texts where they are born (models, search providers, research tasks), progress events,
the report, the LangSmith client's anonymizer, the messages sent to a model, and the CLI's
traffic log and error lines.

The secret values are those of environment variables named like keys: `Endpoints` (the
model and search keys) reads only the environment, so it knows no key that is not here;
`LANGSMITH_API_KEY` and any other `*_API_KEY` (or `*APIKEY`), `*_TOKEN`, `*_SECRET`,
`*_CREDENTIAL` are covered the same way (every provider key in `providers.py` is), and so
is the password of a URL in any variable (`DEEP_RESEARCH_CHECKPOINTS=postgresql://u:p@h/db`).
Credential shapes (`Bearer …`, `sk-…`, `tvly-…`, `lsv2_…`, `user:password@`) are scrubbed
even when their value came from elsewhere. What leaves is UTF-8 as well: a lone surrogate
(`text.controls.without_surrogates`) becomes U+FFFD.
"""

from __future__ import annotations

import functools
import logging
import numbers
import os
import re
import sys
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote, unquote_plus

from deep_research.text.controls import without_surrogates

REDACTED = "[REDACTED]"
# Field names whose values are secrets wherever they appear (headers, params, settings).
SECRET_NAME = re.compile(r"api[_-]?key|authorization|secret|password|cookie|token$", re.I)
# Environment variables holding secrets: their values are scrubbed from every string.
# (pydantic-settings reads names case-insensitively, so must this.)
SECRET_ENV = re.compile(r"(API_?KEY|_TOKEN|_SECRET|_CREDENTIAL|PASSWORD|SECRET_ACCESS_KEY)$", re.I)
# Shapes of credentials even when they did not come from this process's environment.
SECRET_SHAPES = re.compile(
    r"(?i:\b(?:bearer|basic)\s+)[^\s\"',;]+"
    r"|(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"  # user:password@ in URLs
    r"|\bsk-[A-Za-z0-9_\-]{12,}"
    r"|\btvly-[A-Za-z0-9_\-]{8,}"
    r"|\blsv2_[A-Za-z0-9_]{12,}"
)
# Below this length a value is replaced only where it stands as the secret (`without`):
# "x" or "exp" replaced wherever it occurs would shred ordinary words ("ex[REDACTED]ired").
MIN_SECRET_CHARS = 6
# A URL query's parameter (`?token=`, `&api_key=`, `;X-Amz-Signature=`): its value is replaced
# when one of the name's words, or the whole name, is a credential's; matched whole, so
# `?keywords=`, `?author=` and `?design=` keep theirs. Names are decoded first (`t%6Fken`).
QUERY_PARAMETER = re.compile(r"([?&;])([^=?&;#\s\"'<>]+)=([^&;#\s\"'<>]+)")
CREDENTIAL_WORDS = frozenset(
    "token key secret password passwd pwd passphrase auth authorization credential credentials"
    " sig signature apikey accesstoken authtoken refreshtoken clientsecret jwt sessionid".split()
)
NAME_WORD = re.compile(r"[^a-z0-9]+")
CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# A run of URL text: one with percent escapes is decoded before matching, as a client may
# send a secret escaped in any case (`%2f`, `%2F`) and a server logs what it was sent.
URL_RUN = re.compile(r"[^\s\"'<>]+")
PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
# A URL's password in any environment variable (DEEP_RESEARCH_CHECKPOINTS=postgresql://u:p@…):
# scrubbed by value too, so a driver's text that quotes it without the URL around is clean.
URL_PASSWORD = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:([^/@\s]+)@")


class Redactor:
    """Replaces secret values in nested JSON-like data; built from an environment."""

    def __init__(self, environ: Mapping[str, str] | None = None, marker: str = REDACTED) -> None:
        env = os.environ if environ is None else environ
        values = {
            form
            for k, v in env.items()
            if SECRET_ENV.search(k)
            for form in _forms(v)
            if len(v) >= MIN_SECRET_CHARS
        }
        values |= {
            form
            for v in env.values()
            if (found := URL_PASSWORD.match(v.strip()))
            for password in (found.group(1), unquote(found.group(1)))
            for form in (password, without_surrogates(password))
            if len(form) >= MIN_SECRET_CHARS
        }
        # Longest first, so a key that contains another is replaced whole.
        self._values = sorted(values, key=len, reverse=True)
        self._marker = marker
        # A secret with a space may leave form-encoded (`urlencode`, httpx: each space a
        # `+`), which only `unquote_plus` reads back; text is decoded so only when one has.
        self._spaced = any(" " in secret for secret in values)

    def text(self, value: str) -> str:
        # Whatever leaves redacted is written as UTF-8 (a request's JSON, a log, memory's
        # store), which takes no lone surrogate: a model's or a search API's JSON can hold one.
        value = self._replaced(without_surrogates(value))
        # Known values first: one may hold an escape of its own.
        if "%" in value or (self._spaced and "+" in value):
            value = self._replaced(URL_RUN.sub(self._decoded_if_secret, value))
        return SECRET_SHAPES.sub(self._replace_shape, value)

    def _replaced(self, value: str) -> str:
        for secret in self._values:
            value = value.replace(secret, self._marker)
        return value

    def __call__(self, data: Any) -> Any:
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, Mapping):
            return {
                key: self._marker if SECRET_NAME.search(str(key)) and value else self(value)
                for key, value in data.items()
            }
        if isinstance(data, list | tuple):
            return [self(item) for item in data]
        if data is None or isinstance(data, bool | int | float):
            return data
        # Anything else (an exception, a path) is written as text: scrub that text.
        return self.text(str(data))

    def _decoded_if_secret(self, match: re.Match[str]) -> str:
        run = match.group(0)
        readings = [unquote(run)] if PERCENT_ESCAPE.search(run) else []
        if self._spaced and "+" in run:
            readings.append(unquote_plus(run))
        for decoded in readings:
            if any(secret in decoded for secret in self._values):
                return decoded
        return run

    def _replace_shape(self, match: re.Match[str]) -> str:
        scheme = match.group(0).split(maxsplit=1)[0]
        if scheme.lower() in ("bearer", "basic") and scheme != match.group(0):
            return f"{scheme} {self._marker}"
        return self._marker


def _forms(value: str) -> tuple[str, ...]:
    """How a secret value may appear in text: as it is; as text that leaves has it (a
    variable holding bytes that are not UTF-8 has lone surrogates, which `Redactor.text`
    turns into U+FFFD first); and as a URL's query carries its bytes, its escapes in either
    case (decoded, a cut UTF-8 sequence is one U+FFFD, not the stored form's one a byte),
    its spaces as `%20` (form-encoded, as `+`: `Redactor.text` decodes those)."""
    try:  # a POSIX variable's undecodable bytes, as they were
        escaped = quote(value, safe="", errors="surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte (Windows)
        escaped = quote(without_surrogates(value), safe="")
    lower = PERCENT_ESCAPE.sub(lambda escape: escape[0].lower(), escaped)
    return value, without_surrogates(value), escaped, lower


def without(text: str, secret: str, marker: str = REDACTED) -> str:
    """`text` without one known secret: a long one wherever it occurs; a short one only
    where it stands as the secret, never inside a word: a URL's `user:SECRET@`, quoted
    whole (`"SECRET"`, `'SECRET'`, as a driver quotes a value), or as the whole text.
    (`name=SECRET` fields are the caller's, as only it knows the field's name.)"""
    if not secret:
        return text
    if len(secret) >= MIN_SECRET_CHARS:
        return text.replace(secret, marker)
    if text.strip() == secret:
        return marker
    value = re.escape(secret)
    text = re.sub(rf"(?<=:){value}(?=@)", lambda _: marker, text)
    return re.sub(rf"([\"'`]){value}\1", lambda found: f"{found[1]}{marker}{found[1]}", text)


def redactor() -> Redactor:
    """The redactor for the current environment (rebuilt only when the environment changes).

    Every text that leaves passes here (each message of each model call, each progress
    event, each chunk memory writes), so the environment is compared as it is stored
    (`os.environ`'s own mapping, 2 µs) rather than read variable by variable (45 µs)."""
    stored = getattr(os.environ, "_data", None)
    if not isinstance(stored, dict):  # not CPython's `os._Environ`: read as a mapping
        return _redactor_for(tuple(os.environ.copy().items()))
    return _redactor_for(tuple(stored.copy().items()))  # one C call: no thread changes it


@functools.lru_cache(maxsize=8)
def _redactor_for(snapshot: tuple[tuple[bytes | str, bytes | str], ...]) -> Redactor:
    # As stored: bytes on POSIX (decoded as `os.environ` decodes them), str on Windows.
    return Redactor({os.fsdecode(k): os.fsdecode(v) for k, v in snapshot})


def redact(text: str) -> str:
    """`text` with every secret the environment knows, and every key shape, replaced."""
    return redactor().text(text)


def scrub(data: Any) -> Any:
    """JSON-like `data` with secrets replaced in every string and secret-named field."""
    return redactor()(data)


def without_query_secrets(text: str) -> str:
    """`text` with the value of every URL query parameter named like a credential replaced."""
    return QUERY_PARAMETER.sub(_query_parameter, text) if "=" in text else text


def _query_parameter(match: re.Match[str]) -> str:
    lead, name, _ = match.groups()
    return f"{lead}{name}={REDACTED}" if credential_name(unquote(name)) else match.group(0)


def credential_name(name: str) -> bool:
    """Whether a parameter's name says its value is a credential: the whole name, or one of
    its words (`Access_Token`, `x-api-key`, `accessToken`), is a credential's."""
    words = NAME_WORD.split(CAMEL.sub("_", name).lower())
    return any(word in CREDENTIAL_WORDS for word in (*words, "".join(words)))


def redact_log_records() -> None:
    """Scrub every log record from now on, before any handler sees it: its message, its
    arguments (an access log's URL object, a structured event's fields), its traceback and
    its `extra=` fields lose the environment's secrets, key shapes and credential-named query
    values. A record factory, not a handler's filter, so a server that configures its own
    logging later is covered too."""
    made = logging.getLogRecordFactory()
    if getattr(made, "redacts", False):
        return

    def scrubbed_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = made(*args, **kwargs)
        record.msg = _log_value(_event_traceback(record.msg))
        if isinstance(record.args, tuple | Mapping):
            record.args = _log_value(record.args)
        if record.exc_info and record.exc_info[0] is not None:
            # Formatted now and scrubbed, and the exception let go, so no handler formats
            # it again from the frames (a handler prints `exc_text` when `exc_info` is gone).
            text = record.exc_text or logging.Formatter().formatException(record.exc_info)
            record.exc_text, record.exc_info = _log_value(text), None
        if record.stack_info:
            record.stack_info = _log_value(record.stack_info)
        # `extra=` fields are put in the record's __dict__ after the factory returns.
        record.__dict__ = _ScrubbedFields(record.__dict__)
        return record

    scrubbed_record.redacts = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(scrubbed_record)


def _event_traceback(msg: Any) -> Any:
    """A structured event (structlog's dict) with its `exc_info` formatted now, while the
    exception is at hand, into the `exception` text its renderers print, so it is scrubbed."""
    if not isinstance(msg, Mapping) or not msg.get("exc_info"):
        return msg
    exc_info = msg["exc_info"]
    if isinstance(exc_info, BaseException):
        exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
    elif not isinstance(exc_info, tuple):
        exc_info = sys.exc_info()
    event = {key: value for key, value in msg.items() if key != "exc_info"}
    if exc_info[0] is not None:
        event["exception"] = logging.Formatter().formatException(exc_info).rstrip("\n")
    return event


class _ScrubbedFields(dict[str, Any]):
    """A log record's fields: each one added by key (as `Logger.makeRecord` adds `extra=`)
    is scrubbed on its way in. Only text and JSON-like data: an object passed this way is
    for a formatter to use (structlog passes its logger), so it stays what it is."""

    def __setitem__(self, key: str, value: Any) -> None:
        if SECRET_NAME.search(str(key)) and isinstance(value, str) and value:
            value = REDACTED
        elif isinstance(value, str | Mapping) or type(value) in (tuple, list):
            value = _log_value(value)
        super().__setitem__(key, value)


def _log_value(value: Any) -> Any:
    """A log record's message or argument scrubbed, its shape kept: `%d` still gets a number,
    and a structured event's `exc_info` stays what its formatter expects. Any other object
    (an `httpx.URL`, an exception) becomes its scrubbed text, as `%s` would print it."""
    if isinstance(value, str):
        return redact(without_query_secrets(value))
    if value is None or isinstance(value, numbers.Number):  # `%d` and `%.2f` still work
        return value
    if isinstance(value, Mapping):
        return {
            key: item
            if key == "exc_info"
            else REDACTED
            if SECRET_NAME.search(str(key)) and isinstance(item, str) and item
            else _log_value(item)
            for key, item in value.items()
        }
    if type(value) in (tuple, list):  # not a named tuple: its fields are positional
        return type(value)(_log_value(item) for item in value)
    return _log_value(str(value))
