"""`doctor`'s lines for the operator's MCP servers, and the docs' command run as written."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from deep_research.cli.doctor import mcp_servers
from deep_research.cli.doctor.checks import Check
from tests.support.cli import fresh_python
from tests.support.fakes.http_server import closed_port
from tests.support.mcp_config import stdio_entry, use_servers
from tests.support.readme import block_after


async def test_a_line_per_server_reachable_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await mcp_servers.check_mcp_servers(5.0) == []
    servers = {"papers": stdio_entry(), "gone": {"command": str(tmp_path / "nothing")}}
    use_servers(tmp_path, monkeypatch, servers)
    papers, gone = await mcp_servers.check_mcp_servers(20.0)
    assert (papers.name, papers.status) == ("mcp papers", "ok")
    assert papers.detail == "reachable, 2 tools (2 offered to researchers)"
    assert (gone.status, gone.detail) == (
        "warn",
        "the server could not be started or reached; a run goes on without its tools",
    )


async def test_a_tool_whose_schema_cannot_be_offered_is_named_in_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_servers(tmp_path, monkeypatch, {"papers": stdio_entry("schemas")})
    [papers] = await mcp_servers.check_mcp_servers(20.0)
    assert (papers.status, papers.detail) == (
        "warn",
        "reachable, 3 tools (2 offered to researchers); "
        "not offered, their input schema cannot be: remote",
    )


async def test_a_file_that_is_not_usable_is_one_failed_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_servers(tmp_path, monkeypatch, {"Bad Name": {"command": "x"}})
    [check] = await mcp_servers.check_mcp_servers(5.0)
    assert (check.name, check.status) == ("mcp servers", "fail")
    assert "a server's name is" in check.detail


def test_the_docs_doctor_command_shows_each_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from deep_research.cli import doctor
    from deep_research.cli.main import main

    async def no_search(*args: object) -> list[Check]:
        return []  # tests never reach the internet: the search probe is not this page's

    monkeypatch.setattr(doctor, "check_searches", no_search)
    monkeypatch.setenv("LLM_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    monkeypatch.setenv("HOME", str(tmp_path))
    use_servers(tmp_path, monkeypatch, {"papers": stdio_entry()})
    argv = shlex.split(block_after("<!-- mcp-doctor").strip())
    assert argv[0] == "deep-research"
    main(argv[1:])
    assert "mcp papers" in capsys.readouterr().out


def test_an_mcp_client_that_cannot_be_imported_is_one_warning_not_a_doctor_that_fails(
    tmp_path: Path,
) -> None:
    """`doctor` starts without `mcp` (imported only for a configured server), and a broken
    install is named on one line."""
    servers = tmp_path / "servers.json"
    servers.write_text('{"mcpServers": {"notes": {"url": "http://127.0.0.1:9/mcp"}}}')
    code = (
        "import asyncio, os, sys\n"
        "from deep_research.cli.doctor import mcp_servers\n"
        "print('mcp' in sys.modules)\n"
        "sys.modules['mcp'] = None  # its import fails, as when the package is broken\n"
        f"os.environ['MCP_SERVERS_FILE'] = {str(servers)!r}\n"
        "[check] = asyncio.run(mcp_servers.check_mcp_servers(5.0))\n"
        "print(check.name, check.status, 'cannot be imported' in check.detail)\n"
    )
    assert fresh_python(code) == "False\nmcp servers warn True"
