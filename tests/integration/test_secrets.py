"""Secrets stay out of errors, logs and traces; a per-run context cannot read files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deep_research.cli.traffic import TrafficLog
from deep_research.config.names import ConfigError
from deep_research.config.settings import Context
from deep_research.llm.chat_models import public_url
from deep_research.llm.models import role_model
from deep_research.text.secrets import REDACTED, Redactor


@pytest.mark.parametrize(
    "private", [{"_env_file": "/etc/passwd"}, {"_secrets_dir": "/tmp"}, {"_cli_parse_args": True}]
)
def test_run_context_cannot_use_settings_loader_keywords(private: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match="unknown setting") as error:
        Context(**private)
    assert "root:" not in str(error.value), "nothing read from the file is echoed"


def test_endpoint_in_errors_carries_no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (
        public_url("https://alice:pw-Q7x9@llm.corp:8443/v1?key=abc") == "https://llm.corp:8443/v1"
    )
    assert public_url("http://[::1]:8080/v1") == "http://[::1]:8080/v1"
    monkeypatch.setenv("LLM_BASE_URL", "http://alice:pw-Q7x9Zk2@127.0.0.1:9/v1")
    model = role_model(Context(), "researcher")
    assert model.endpoint == "http://127.0.0.1:9/v1"


def test_redactor_scrubs_keys_by_name_shape_and_environment() -> None:
    redact = Redactor({"llm_api_key": "corp-llm-key-8f3a9c", "PATH": "/usr/bin"})
    assert redact("sent corp-llm-key-8f3a9c") == f"sent {REDACTED}"
    assert redact("Authorization: Basic dXNlcjpwYXNz") == f"Authorization: Basic {REDACTED}"
    assert redact("Bearer sk-proj-abcdefghijklmnop") == f"Bearer {REDACTED}"
    assert redact("at https://alice:pw-Q7x9@host/v1") == f"at https://{REDACTED}@host/v1"
    assert redact({"x-api-key": "whatever", "n": 3}) == {"x-api-key": REDACTED, "n": 3}
    assert redact("/usr/bin stays") == "/usr/bin stays"


def test_traffic_log_scrubs_objects_written_as_text(tmp_path: Path) -> None:
    log = TrafficLog(tmp_path / "t.jsonl", Redactor({}))
    log.write("progress", error=RuntimeError("upstream said: Bearer sk-proj-abcdefghijklmnop"))
    log.close()
    record = json.loads((tmp_path / "t.jsonl").read_text())
    assert record["error"] == f"upstream said: Bearer {REDACTED}"
