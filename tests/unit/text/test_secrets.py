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
