"""The redactor: secret fields, the environment's known values and key shapes."""

from __future__ import annotations

import pytest

from deep_research.text.secrets import REDACTED, Redactor, without


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
