"""The redactor: secret fields, the environment's known values and key shapes."""

from __future__ import annotations

from deep_research.text.secrets import REDACTED, Redactor


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
