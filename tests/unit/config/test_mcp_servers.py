"""The operator's MCP servers file: the only place a server is named, checked whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deep_research.config import mcp_servers
from deep_research.config.mcp_servers import McpServer, parse, read_file
from deep_research.config.names import ConfigError


def test_a_stdio_and_an_http_server_are_read() -> None:
    servers = parse(
        {
            "mcpServers": {
                "papers": {"command": "papers-mcp", "args": ["--db", "x"], "env": {"K": "v"}},
                "notes-2": {"url": "http://127.0.0.1:9000/mcp"},
            }
        }
    )
    assert servers == (
        McpServer("papers", command="papers-mcp", args=("--db", "x"), env=(("K", "v"),)),
        McpServer("notes-2", url="http://127.0.0.1:9000/mcp"),
    )


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ([], '"mcpServers" object'),
        ({"mcpServers": []}, '"mcpServers" object'),
        ({"mcpServers": {"Bad Name": {"command": "x"}}}, "a server's name is"),
        ({"mcpServers": {"a" * 30: {"command": "x"}}}, "a server's name is"),
        ({"mcpServers": {"a__b\n": {"command": "x"}}}, "a server's name is"),
        ({"mcpServers": {"s": "x"}}, "must be an object"),
        ({"mcpServers": {"s": {}}}, "needs a command or a url"),
        ({"mcpServers": {"s": {"command": "x", "url": "http://h"}}}, "needs a command or a url"),
        ({"mcpServers": {"s": {"command": 3}}}, "each command value"),
        ({"mcpServers": {"s": {"command": "x", "args": "a b"}}}, "args is a list"),
        ({"mcpServers": {"s": {"command": "x", "args": [1]}}}, "each args value"),
        ({"mcpServers": {"s": {"command": "x", "args": ["a"] * 99}}}, "args is a list"),
        ({"mcpServers": {"s": {"command": "x", "env": {"A B": "v"}}}}, "env names"),
        ({"mcpServers": {"s": {"command": "x", "env": {"A": None}}}}, "each env value"),
        ({"mcpServers": {"s": {"command": "x\0y"}}}, "each command value"),
        ({"mcpServers": {"s": {"url": "file:///etc/passwd"}}}, "http(s) URL"),
        ({"mcpServers": {"s": {"url": "http://"}}}, "http(s) URL"),
        ({"mcpServers": {"s": {"command": "x", "cwd": "/"}}}, "unknown keys"),
        ({"mcpServers": {f"s{i}": {"command": "x"} for i in range(20)}}, "at most 8"),
    ],
)
def test_a_file_that_is_not_usable_is_refused_with_what_is_wrong(data: object, says: str) -> None:
    with pytest.raises(ConfigError, match="MCP_SERVERS_FILE") as refused:
        parse(data)
    assert says in str(refused.value)


def test_a_huge_missing_or_binary_file_is_refused(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps({"mcpServers": {}, "pad": "x" * 100_000}))
    with pytest.raises(ConfigError, match="over 64000 bytes"):
        read_file(huge)
    with pytest.raises(ConfigError, match="cannot be read"):
        read_file(tmp_path / "missing.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    with pytest.raises(ConfigError, match="not UTF-8 JSON"):
        read_file(binary)


def test_only_the_environment_s_file_configures_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert mcp_servers.configured() == ()
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"papers": {"url": "https://h.example/mcp"}}}))
    monkeypatch.setenv("MCP_SERVERS_FILE", str(path))
    assert [server.name for server in mcp_servers.configured()] == ["papers"]


def test_a_cli_run_with_calls_to_spend_is_refused_at_its_start_for_an_unusable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI refuses the run (exit 2, what is wrong) before it logs or sends anything;
    the context itself reads no file (LangGraph builds it on the server's event loop)."""
    from deep_research.cli.main import main
    from deep_research.config.settings import load_context

    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"Bad Name": {"command": "x"}}}')
    monkeypatch.setenv("MCP_SERVERS_FILE", str(path))
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")  # never reached
    monkeypatch.chdir(tmp_path)
    assert load_context({}).max_mcp_calls_per_run > 0
    assert main(["--no-clarify", "A question?"]) == 2
    assert "a server's name is" in capsys.readouterr().err
    assert not (tmp_path / ".deep_research" / "runs").exists() or not list(
        (tmp_path / ".deep_research" / "runs").iterdir()
    )


async def test_a_step_reads_the_file_off_the_loop_and_an_unusable_one_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blockbuster import blockbuster_ctx

    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"papers": {"url": "https://h.example/mcp"}}}))
    monkeypatch.setenv("MCP_SERVERS_FILE", str(path))
    with blockbuster_ctx():
        assert [server.name for server in await mcp_servers.in_run()] == ["papers"]
    path.write_text("{")
    with pytest.raises(ConfigError, match="MCP_SERVERS_FILE"):
        await mcp_servers.in_run()
    monkeypatch.delenv("MCP_SERVERS_FILE")
    assert await mcp_servers.in_run() == ()


def test_an_http_server_s_headers_are_read_with_their_variables_unresolved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NOTES_AUTH", "notes-key-7c2d")
    headers = {"Authorization": "Bearer ${NOTES_AUTH}", "X-Client": "deep-research"}
    [server] = parse({"mcpServers": {"notes": {"url": "http://h.example/mcp", "headers": headers}}})
    assert server.headers == tuple(headers.items())
    assert mcp_servers.header_values(server) == {
        "Authorization": "Bearer notes-key-7c2d",
        "X-Client": "deep-research",
    }
    assert "notes-key" not in repr(server) and "NOTES_AUTH" not in repr(server)


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        ([], "headers is an object of at most 16"),
        ({f"X-{i}": "v" for i in range(17)}, "headers is an object of at most 16"),
        ({"Bad Name": "v"}, "a header's name is a token"),
        ({"X-A\r\nInjected": "v"}, "a header's name is a token"),
        ({"Host": "evil.example"}, "not one the MCP transport sets"),
        ({"mcp-session-id": "x"}, "not one the MCP transport sets"),
        ({"X-A": 3}, "each headers value"),
        ({"X-A": ""}, "each headers value"),
        ({"X-A": "v\r\nX-Injected: 1"}, "one printable ASCII line"),
        (
            {"X-A": "${DR_TEST_UNSET_VAR}"},
            "header X-A refers to DR_TEST_UNSET_VAR, which is not set",
        ),
        ({"X-A": "${DR_TEST_MULTILINE}"}, "one printable ASCII line"),
    ],
)
def test_headers_that_are_not_usable_are_refused_without_their_values(
    headers: object, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DR_TEST_UNSET_VAR", raising=False)
    monkeypatch.setenv("DR_TEST_MULTILINE", "secret-line-1\nsecret-line-2")
    with pytest.raises(ConfigError, match="MCP_SERVERS_FILE") as refused:
        parse({"mcpServers": {"s": {"url": "http://h.example/mcp", "headers": headers}}})
    assert says in str(refused.value)
    assert "secret-line" not in str(refused.value) and "X-Injected" not in str(refused.value)


def test_headers_are_for_a_url_server() -> None:
    with pytest.raises(ConfigError, match="headers are for a url server"):
        parse({"mcpServers": {"s": {"command": "x", "headers": {"X-A": "v"}}}})


def test_the_docs_servers_file_is_read_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.readme import block_after

    monkeypatch.setenv("NOTES_TOKEN", "notes-token-value")
    papers, wiki, notes = parse(json.loads(block_after("<!-- mcp-servers-file")))
    assert (papers.command, wiki.url, notes.url) == (
        "papers-mcp",
        "http://127.0.0.1:9000/mcp",
        "https://notes.example/mcp",
    )
    assert mcp_servers.header_values(notes) == {"Authorization": "Bearer notes-token-value"}
