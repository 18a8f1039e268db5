"""The launcher's checks: an address it cannot guard, a config that cannot check the token."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from deep_research.config.agent_server import TOKEN_ENV
from deep_research.server.launch import LaunchRefused, check, main, own_url
from tests.support.langgraph_dev import free_port

REPO = Path(__file__).resolve().parents[3]
TOKEN = "secret-token-0123456789"
SERVER_TOKEN = "Srv+tok/0123456789-abcdef"
GUESS = "guessed-Token-9876543210"


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


def test_a_token_in_the_query_string_is_in_no_log(tmp_path: Path) -> None:
    """The real launcher and uvicorn, with an Aegra-shaped structured access log beside
    uvicorn's: a token sent as `?token=` (refused) lands in neither, nor does a guess."""
    port = free_port()
    script = (
        "import sys\n"
        "from deep_research.server import launch\n"
        "launch.APP = 'tests.support.access_logged_app:app'\n"
        "sys.exit(launch.main(sys.argv[1:]))\n"
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(REPO),
        "DEEP_RESEARCH_DOTENV": "0",
        TOKEN_ENV: SERVER_TOKEN,
        "RUN_MIGRATIONS_ON_STARTUP": "false",  # no database here, nor Aegra to prepare it
    }
    args = ["--port", str(port), "--config", str(REPO / "aegra.json")]
    with (tmp_path / "server.log").open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-c", script, *args], cwd=tmp_path, env=env, stdout=out, stderr=out
        )
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for(server, base)
        with httpx.Client(base_url=base, trust_env=False, timeout=10) as http:
            for url in (
                f"/mcp?token={SERVER_TOKEN}",
                f"/mcp?x=1&access_token={GUESS}",
                f"/threads?api_key={GUESS}&limit=5",
                f"/mcp?token={quote(SERVER_TOKEN, safe='')}%20",
            ):
                assert http.post(url, json={}).status_code in (401, 404, 405), url
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert '"POST /mcp?token=[REDACTED] HTTP/1.1" 401' in log, log  # uvicorn's line
    assert '"url": "/mcp?x=1&access_token=[REDACTED]"' in log, log  # the structured one
    assert "limit=5" in log, "a parameter that is not a credential stays readable"
    assert SERVER_TOKEN not in log and GUESS not in log, log


def _wait_for(server: subprocess.Popen[bytes], base: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the server exited {server.returncode}")
        try:
            httpx.get(f"{base}/mcp", trust_env=False, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    pytest.fail("the server did not start in 60 s")
