"""The launcher's checks: an address it cannot guard, a config that cannot check the token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deep_research.server.launch import LaunchRefused, check, main, own_url

REPO = Path(__file__).resolve().parents[3]
TOKEN = "secret-token-0123456789"


def test_the_projects_config_serves_the_graph_and_checks_the_token() -> None:
    config = check("0.0.0.0", REPO / "aegra.json", TOKEN)
    assert config["graphs"] == {"deep_research": "./deep_research/graph.py:make_graph"}
    assert config["http"]["app"] == "deep_research.server.app:app"
    assert config["auth"] == {"path": "deep_research.server.auth:auth"}
    # The same graph langgraph dev serves.
    langgraph = json.loads((REPO / "langgraph.json").read_text())
    assert langgraph["graphs"]["deep_research"] == "deep_research.graph:make_graph"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "example.com"])
def test_no_address_beyond_loopback_without_a_token(host: str) -> None:
    with pytest.raises(LaunchRefused, match=f"refusing to listen on {host} without a token"):
        check(host, REPO / "aegra.json", None)
    check("127.0.0.1", REPO / "aegra.json", None)


def test_a_token_needs_an_auth_hook_in_the_config(tmp_path: Path) -> None:
    config = tmp_path / "aegra.json"
    config.write_text(json.dumps({"graphs": {"deep_research": "x.py:g"}}))
    with pytest.raises(LaunchRefused, match="no auth hook"):
        check("127.0.0.1", config, TOKEN)


@pytest.mark.parametrize("text", ["", "[]", "{not json", json.dumps({"graphs": []})])
def test_a_config_that_is_not_one_is_refused(tmp_path: Path, text: str) -> None:
    config = tmp_path / "aegra.json"
    config.write_text(text)
    with pytest.raises(LaunchRefused):
        check("127.0.0.1", config, None)


def test_a_refusal_is_one_line_and_exit_code_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_SERVER_TOKEN", "short-one")
    assert main(["--config", str(REPO / "aegra.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "at least 16" in err and "short-one" not in err


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("0.0.0.0", "http://127.0.0.1:2026"),
        ("::", "http://127.0.0.1:2026"),
        ("10.1.2.3", "http://10.1.2.3:2026"),
        ("::1", "http://[::1]:2026"),
    ],
)
def test_an_instance_answers_itself_where_it_listens(host: str, url: str) -> None:
    assert own_url(host, 2026) == url
