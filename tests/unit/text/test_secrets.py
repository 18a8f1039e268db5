"""The redactor: secret fields, the environment's known values and key shapes."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator

import pytest

from deep_research.text.secrets import (
    REDACTED,
    Redactor,
    redact,
    redact_log_records,
    without,
    without_query_secrets,
)


def test_redactor_scrubs_secret_fields_known_values_and_key_shapes() -> None:
    redact = Redactor({"MY_API_KEY": "abc123secret", "LLM_MODEL": "not-a-secret-value"})
    data = {
        "headers": {"Authorization": "Bearer xyz", "Content-Type": "application/json"},
        "api_key": "whatever",
        "note": ["key abc123secret here", "not-a-secret-value", "sk-proj-AAAAAAAAAAAAAAAA"],
        "max_tokens": 512,
        "text": "curl -H 'authorization: bearer tok.en-1'",
    }
    assert redact(data) == {
        "headers": {"Authorization": REDACTED, "Content-Type": "application/json"},
        "api_key": REDACTED,
        "note": [f"key {REDACTED} here", "not-a-secret-value", REDACTED],
        "max_tokens": 512,
        "text": f"curl -H 'authorization: bearer {REDACTED}'",
    }


def test_a_url_password_in_any_variable_is_scrubbed_by_value() -> None:
    env = {"DEEP_RESEARCH_CHECKPOINTS": "postgresql://research:w0rd%2Fpass@db:5432/runs"}
    redact = Redactor(env)
    # As a driver might quote it, without the URL around it: raw and unquoted.
    assert redact.text("auth failed: w0rd/pass, w0rd%2Fpass") == (
        f"auth failed: {REDACTED}, {REDACTED}"
    )
    assert Redactor({"DEEP_RESEARCH_CHECKPOINTS": "postgresql://u:ab@h/db"}).text("ab c") == "ab c"


SENTENCES = (
    "connection timeout expired",
    'connection to server at "127.0.0.1", port 5432 failed: FATAL: password authentication '
    'failed for user "u"',
    "an x-ray of the 1 expired pass: exit 2",
)


@pytest.mark.parametrize("secret", ["x", "e", "p", "ex", "ti", "exp", "ire", "1", "on"])
def test_a_short_secret_never_shreds_a_word(secret: str) -> None:
    for sentence in SENTENCES:
        assert without(sentence, secret) == sentence


@pytest.mark.parametrize("secret", ["x", "p4", "ab!"])
def test_a_short_secret_is_replaced_where_it_stands_as_the_secret(secret: str) -> None:
    assert without(f"postgresql://u:{secret}@h/db failed", secret) == (
        f"postgresql://u:{REDACTED}@h/db failed"
    )
    assert without(f"invalid value \"{secret}\" for 'x{secret}'", secret) == (
        f"invalid value \"{REDACTED}\" for 'x{secret}'"
    )
    assert without(f"  {secret}\n", secret) == REDACTED


def test_a_long_secret_is_replaced_wherever_it_occurs() -> None:
    secret = "expired-Hunter2"
    assert without(f"a{secret}b and {secret}", secret) == f"a{REDACTED}b and {REDACTED}"
    assert without("nothing here", "") == "nothing here"


def test_a_credential_named_query_value_is_replaced_and_others_kept() -> None:
    text = "GET /mcp?token=abc&limit=5;api_key=k1 then /x?q=token&Access_Token=z#f and ?page=2"
    assert without_query_secrets(text) == (
        f"GET /mcp?token={REDACTED}&limit=5;api_key={REDACTED} then "
        f"/x?q=token&Access_Token={REDACTED}#f and ?page=2"
    )


def test_a_secret_is_scrubbed_as_a_query_string_carries_it_too() -> None:
    redact = Redactor({"DEEP_RESEARCH_SERVER_TOKEN": "a+b/c=d-0123456789"})
    assert redact.text("/x?t=a%2Bb%2Fc%3Dd-0123456789 a+b/c=d-0123456789") == (
        f"/x?t={REDACTED} {REDACTED}"
    )


@pytest.fixture
def scrubbing() -> Iterator[tuple[logging.Logger, list[logging.LogRecord]]]:
    """A logger whose records go to a list, with `redact_log_records` installed; the record
    factory is put back afterwards."""
    before = logging.getLogRecordFactory()
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    logger = logging.getLogger("test.secrets.records")
    logger.addHandler(handler)
    try:
        redact_log_records()
        yield logger, seen
    finally:
        logging.setLogRecordFactory(before)
        logger.removeHandler(handler)
    assert logging.getLogRecordFactory() is before


def test_every_log_record_is_scrubbed_before_a_handler_sees_it(
    monkeypatch: pytest.MonkeyPatch, scrubbing: tuple[logging.Logger, list[logging.LogRecord]]
) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_SERVER_TOKEN", "server-Token-0123456789")
    logger, seen = scrubbing
    redact_log_records()  # once is enough: a second call adds nothing
    logger.warning('%s - "%s %s" %d', "127.0.0.1:1", "GET", "/r?token=guess-1", 401)
    logger.warning({"event": "x", "http": {"url": "/r?key=server-Token-0123456789"}})
    logger.warning("sent %s", {"Authorization": "Bearer abc", "n": 3})
    assert seen[0].getMessage() == f'127.0.0.1:1 - "GET /r?token={REDACTED}" 401'
    assert seen[1].msg == {"event": "x", "http": {"url": f"/r?key={REDACTED}"}}
    assert seen[2].getMessage() == f"sent {{'Authorization': '{REDACTED}', 'n': 3}}"
    assert len(seen) == 3


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("/s?keywords=a&author=b&design=c&monkey=d&tokens_used=3", True),
        ("/s?token=a", False),
        ("/s?t%6Fken=a", False),
        ("/s?X-Amz-Signature=a", False),
        ("/s?accessToken=a", False),
        ("/s?client-secret=a", False),
        ("/s?apikey=a", False),
        ("/s?sig=a", False),
        ("/s?sessionId=a", False),
    ],
)
def test_query_names_are_matched_whole_and_decoded(text: str, kept: bool) -> None:
    assert (without_query_secrets(text) == text) is kept


def test_a_secret_percent_encoded_in_any_case_is_scrubbed() -> None:
    redact = Redactor({"DEEP_RESEARCH_SERVER_TOKEN": "a/b=c-0123456789"})
    assert redact.text("/x?t=a%2fb%3dc-0123456789 ok") == f"/x?t={REDACTED} ok"
    assert redact.text("/x?q=100%25 ok") == "/x?q=100%25 ok"


class URL:
    """An object logged as an argument, as httpx logs its `URL`."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def test_objects_tracebacks_and_extra_fields_are_scrubbed_too(
    monkeypatch: pytest.MonkeyPatch, scrubbing: tuple[logging.Logger, list[logging.LogRecord]]
) -> None:
    monkeypatch.setenv("LLM_API_KEY", "key-0123456789abcdef")
    logger, seen = scrubbing
    monkeypatch.setattr(logger, "level", logging.INFO)
    logger.info("HTTP Request: %s %r %d", URL("https://u:pass-word@h/v1?key=k1"), 2.5, 7)
    try:
        raise ValueError("refused key-0123456789abcdef")
    except ValueError:
        logger.exception("call failed")
        logger.error({"event": "failed", "exc_info": True})  # as structlog passes one
    kept = URL("for a formatter")
    logger.info("done", extra={"url": "/r?token=t1", "password": "pw", "n": 3, "o": kept})
    assert seen[0].getMessage() == f"HTTP Request: https://{REDACTED}@h/v1?key={REDACTED} 2.5 7"
    shown = logging.Formatter().format(seen[1])
    assert "ValueError: refused" in shown and "0123456789abcdef" not in shown
    assert seen[1].exc_info is None
    event = seen[2].msg
    assert "exc_info" not in event and "0123456789abcdef" not in event["exception"]
    assert event["exception"].endswith(f"ValueError: refused {REDACTED}")
    assert [seen[3].__dict__[k] for k in ("url", "password", "n", "o")] == [
        f"/r?token={REDACTED}",
        REDACTED,
        3,
        kept,
    ]


@pytest.mark.parametrize("text", ["?" * 400_000, "?a" * 200_000, "%" * 400_000])
def test_a_hostile_line_is_scrubbed_in_linear_time(text: str) -> None:
    # This process's CPU time, not the wall clock a busy machine stretches.
    started = time.process_time()
    assert redact(without_query_secrets(text)) == text
    assert time.process_time() - started < 5  # quadratic, it took minutes


def test_redacted_text_holds_no_lone_surrogate_and_can_be_written_as_utf8() -> None:
    """JSON's `"\\ud83d"` without its pair decodes to a lone surrogate: what leaves redacted
    (a request to a model, the traffic log, memory) has U+FFFD there, pairs kept."""
    data = {"content": "heat \ud83d pumps \U0001f600", "calls": [{"topic": "x\udc00"}]}
    clean = Redactor({})(data)
    assert clean == {"content": "heat \ufffd pumps \U0001f600", "calls": [{"topic": "x\ufffd"}]}
    json.dumps(clean, ensure_ascii=False).encode("utf-8")


def test_the_shared_redactor_follows_every_change_of_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `redact` compares the environment as it is stored, so a secret set, changed or removed
    # at any moment is what the next text is redacted with, and a cached redactor is reused
    # only for the same environment.
    monkeypatch.setenv("SAMPLE_API_KEY", "first-secret-value-1")
    assert redact("a first-secret-value-1 b") == f"a {REDACTED} b"
    monkeypatch.setenv("SAMPLE_API_KEY", "second-secret-value-2")
    assert redact("first-secret-value-1 second-secret-value-2") == (
        f"first-secret-value-1 {REDACTED}"
    )
    monkeypatch.setenv("SAMPLE_DSN", "postgresql://user:url-password-3@db/x")
    assert redact("url-password-3") == REDACTED
    monkeypatch.delenv("SAMPLE_API_KEY")
    assert redact("second-secret-value-2") == "second-secret-value-2"
    # A value os.environ holds as bytes that are not UTF-8 is read as it decodes them.
    monkeypatch.setenv("SAMPLE_TOKEN", "caf\udce9-token-value")
    assert redact("x caf\udce9-token-value y") == f"x {REDACTED} y"


def test_a_secret_that_is_not_utf8_is_scrubbed_and_breaks_nothing() -> None:
    # A variable holding bytes that are not UTF-8 (os.environ keeps them as lone
    # surrogates) made every redaction raise UnicodeEncodeError, so every progress event
    # and model call failed; it is scrubbed as text that leaves holds it.
    redact = Redactor(
        {"SAMPLE_API_KEY": "caf\udce9-key-value", "DSN": "pg://u:pass\udcffword@h/db"}
    )
    assert redact.text("k caf\udce9-key-value p pass\udcffword") == f"k {REDACTED} p {REDACTED}"
    assert redact.text("q=caf%E9-key-value") == f"q={REDACTED}"
    # A lone surrogate that stands for no byte (a Windows environment can hold one).
    windows = Redactor({"SAMPLE_API_KEY": "abc\ud800defgh"})
    assert windows.text("abc\ud800defgh") == REDACTED


def test_an_environment_that_is_a_plain_mapping_is_read_as_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Not CPython's `os._Environ` (no stored mapping to compare): read variable by variable.
    import os

    monkeypatch.setattr(os, "environ", {"SAMPLE_API_KEY": "plain-mapping-secret-1"})
    assert redact("x plain-mapping-secret-1") == f"x {REDACTED}"


def test_a_cut_utf8_secret_echoed_with_lowercase_escapes_is_scrubbed() -> None:
    # Decoding `%e2%82` gives one U+FFFD for the cut sequence, the stored form one a byte:
    # the lowercase escapes a client writes are a form of their own.
    redact = Redactor({"X_API_KEY": "abcdef\udce2\udc82ghij"})
    assert redact.text("k=abcdef%e2%82ghij") == f"k={REDACTED}"
    assert redact.text("k=abcdef%E2%82ghij") == f"k={REDACTED}"


def test_a_secret_holding_an_escape_is_scrubbed_beside_an_escaped_one() -> None:
    # Decoding the URL first turned the first secret's `%41` into `A` before it was looked
    # for, and it left half-decoded.
    redact = Redactor({"P_API_KEY": "pa%41ss%word", "Q_API_KEY": "second/secret"})
    assert redact.text("u?a=pa%41ss%word&b=second%2Fsecret") == f"u?a={REDACTED}&b={REDACTED}"


def test_a_secret_with_spaces_form_encoded_is_scrubbed() -> None:
    # A form (application/x-www-form-urlencoded: a query httpx or urlencode builds) writes
    # a space as `+`, which percent-decoding does not read back; escapes in any case.
    redact = Redactor({"X_API_KEY": "pass phrase/1+x"})
    for sent in ("pass+phrase%2F1%2Bx", "pass+phrase%2f1%2bx", "pass+phrase%2F1%2bx"):
        assert redact.text(f"q={sent}&z=1") == f"q={REDACTED}&z=1"
    assert Redactor({"X_API_KEY": "a b~c*d1"}).text("q=a+b%7Ec*d1") == f"q={REDACTED}"
    assert Redactor({"X_API_KEY": "plain spaced"}).text("u?q=plain+spaced") == f"u?q={REDACTED}"
    # A URL's password with a space, wherever it is set.
    dsn = Redactor({"DEEP_RESEARCH_CHECKPOINTS": "postgresql://u:pass%20word@h/db"})
    assert dsn.text("p=pass+word") == f"p={REDACTED}"
    # Text that does not decode to a secret is left as it was written.
    assert redact.text("C++ and a+b, 100%") == "C++ and a+b, 100%"
