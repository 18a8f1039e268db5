"""cli.memory: `memory list | search | forget | clear --yes` in process, on a real store."""

from __future__ import annotations

import asyncio
import io
import socket

import pytest

from deep_research.cli.args import UsageError
from deep_research.cli.memory import memory_command
from deep_research.cli.plain import terminal_console
from deep_research.memory.open import open_store
from deep_research.memory.research import CitedPage, remember

# chromadb's import and MiniLM's load take seconds on a first use.
pytestmark = pytest.mark.slow

PAGE = CitedPage("https://example.org/tides", "Tidal power", ["Tidal barrages store energy."])


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    console = terminal_console()
    console.file = out
    return memory_command(list(argv), console), out.getvalue()


def _remember(thread: str, question: str) -> None:
    async def write() -> None:
        store = await open_store()
        await remember(
            store, thread_id=thread, question=question, report="# R\n\nText.", cited=[PAGE]
        )

    asyncio.run(write())


@pytest.mark.parametrize(
    "argv", [[], ["drop"], ["list", "x"], ["search"], ["forget"], ["clear"], ["clear", "yes"]]
)
def test_usage_errors_show_the_usage(argv: list[str]) -> None:
    with pytest.raises(UsageError, match="usage: deep-research memory") as caught:
        memory_command(argv, terminal_console())
    assert ("confirm with --yes" in str(caught.value)) == (argv[:1] == ["clear"])


def test_outside_text_is_printed_inert_on_one_line() -> None:
    _remember("tide-thread", "How do [link=https://e.example]tides[/link] store\x1b[2J\nenergy?")
    code, out = _run("list")
    assert code == 0 and "1 report" in out
    [line] = [line for line in out.splitlines() if "tide-thread" in line]
    assert "[link=https://e.example]tides[/link]" in line and "\x1b" not in out
    code, out = _run("search", "[/usr/bin] tidal energy")  # markup in the query is text
    assert code == 0 and "tide-thread" in out.split("Passages:")[0]
    assert "https://example.org/tides" in out.split("Passages:")[1]


def test_forget_says_what_it_did_and_clear_forgets_everything() -> None:
    _remember("a-thread", "Question a?")
    _remember("b-thread", "Question b?")
    assert _run("forget", "a-thread\x1b[31m") == (
        1,
        "Nothing remembered for thread a-thread[31m.\n",
    )
    code, out = _run("forget", "a-thread")
    assert code == 0 and out.startswith("Forgot thread a-thread (")
    code, out = _run("clear", "--yes")
    assert code == 0 and "cleared" in out
    assert "0 reports" in _run("list")[1]


def test_an_unreachable_memory_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("CHROMA_PORT", str(port))
    assert _run("list") == (1, "")
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"deep-research: Chroma server 127.0.0.1:{port} cannot be reached")
