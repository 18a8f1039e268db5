"""Running the `deep-research` CLI as a subprocess against the scripted servers.

Each subprocess gets an explicit environment (nothing from the developer's shell or
`.env`), runs in a temporary directory (so `.deep_research/` and `reports/` land there),
and imports this checkout's `deep_research` through PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import SERVER_IDLE

REPO = Path(__file__).resolve().parents[2]
QUESTION = "How well do heat pumps work in cold climates?"
CLI_TIMEOUT = 120.0


def fresh_python(code: str) -> str:
    """What `code` prints, run in a fresh interpreter from the repository (what a process
    imports, and when, is the process's own); it must succeed."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


LLM_KEY = "sk-local-SECRET-0123456789abcdef"
TAVILY_KEY = "tvly-SECRET-0123456789abcdef"


def cli_env(llm: ScriptedOpenAIServer, tavily: FakeTavilyServer, home: Path) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {
        "PATH": os.pathsep.join([bin_dir, "/usr/bin", "/bin"]),
        "HOME": str(home),
        "PYTHONPATH": str(REPO),
        "LLM_BASE_URL": llm.base_url,
        "LLM_API_KEY": LLM_KEY,
        "LLM_MAX_RETRIES": "0",
        "LLM_MODEL": "test-model",
        "TAVILY_API_KEY": TAVILY_KEY,
        "TAVILY_API_BASE_URL": tavily.url,
        "SEARCH_PROVIDER": "tavily",
        "LANGSMITH_TRACING": "false",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "DEEP_RESEARCH_DOTENV": "0",  # no `.env` above the temporary directory is read
        "USE_MEMORY": "false",  # the tests of memory turn it on
        "MEMORY_SERVER_IDLE": SERVER_IDLE,  # a shared memory's server ends soon after the test
    }


def priced_env(llm: ScriptedOpenAIServer, tavily: FakeTavilyServer, home: Path) -> dict[str, str]:
    """Every role on `openai:gpt-4o-mini` ($0.15/M in, $0.60/M out), answered locally."""
    return {
        **cli_env(llm, tavily, home),
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "sk-test-0123456789abcdef",
        **{f"{role}_MODEL": "openai:gpt-4o-mini" for role in ROLES},
    }


ROLES = ("CLARIFIER", "ORCHESTRATOR", "RESEARCHER")


def library_env(home: Path) -> dict[str, str]:
    """What `deep-research library …` needs: no model, no search, a memory in `home`."""
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "HOME": str(home),
        "PYTHONPATH": str(REPO),
        "MEMORY_DIR": str(home / "memory"),
        "DEEP_RESEARCH_DOTENV": "0",
        "MEMORY_SERVER_IDLE": SERVER_IDLE,
    }


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "deep_research.cli", *args]


def start_in_terminal(
    cwd: Path, env: dict[str, str], *args: str, columns: int = 120
) -> tuple[subprocess.Popen[bytes], int]:
    """The CLI in a pseudo-terminal (stdin, stdout and stderr); returns it and the pty's end."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        cli_command(*args),
        cwd=cwd,
        env={**env, "TERM": "xterm", "COLUMNS": str(columns)},
        stdin=follower,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
    )
    os.close(follower)
    return proc, leader


def run_cli(
    cwd: Path, env: dict[str, str], *args: str, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_command(*args),
        cwd=cwd,
        env=env,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )


def traffic_records(cwd: Path) -> tuple[Path, list[dict[str, Any]]]:
    """The only traffic log under `cwd/.deep_research/runs/`, parsed."""
    [path] = (cwd / ".deep_research" / "runs").glob("*.jsonl")
    return path, [json.loads(line) for line in path.read_text().splitlines()]


def read_until(fd: int, marker: bytes, seen: bytearray) -> None:
    """Read a pseudo-terminal into `seen` until `marker` appears (or the child is gone)."""
    while marker not in seen:
        chunk = _next_chunk(fd, seen)
        if not chunk:
            return
        seen.extend(chunk)


def _next_chunk(fd: int, seen: bytearray) -> bytes:
    """What the terminal shows next (b"" once the child closed it), within `CLI_TIMEOUT`."""
    # poll, not select: select refuses a descriptor past 1023, which a long test session's
    # worker reaches
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    ready = poller.poll(CLI_TIMEOUT * 1000)
    assert ready, f"no output for {CLI_TIMEOUT}s; so far:\n{seen.decode(errors='replace')}"
    assert not ready[0][1] & select.POLLNVAL, f"descriptor {fd} is not open"
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the child closed the terminal
        return b""


# The prompt a terminal run shows after its report (`deep_research.cli.follow_ups`).
FOLLOW_UP_PROMPT = b"follow-up> "
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def finish_in_terminal(proc: subprocess.Popen[bytes], leader: int, seen: bytearray) -> int:
    """Read to the follow-up prompt after the report, decline it (Enter), read the rest until
    the terminal closes; the process's exit code."""
    read_until(leader, FOLLOW_UP_PROMPT, seen)
    os.write(leader, b"\n")
    read_until(leader, b"\x00never-printed", seen)
    return proc.wait(timeout=CLI_TIMEOUT)


def screen_to_exit(proc: subprocess.Popen[bytes], leader: int) -> str:
    """Everything the CLI drew in its terminal until it closed it, each follow-up prompt
    declined (Enter), without ANSI codes."""
    seen = bytearray()
    declined = 0
    while chunk := _next_chunk(leader, seen):
        seen.extend(chunk)
        if seen.count(FOLLOW_UP_PROMPT) > declined:
            os.write(leader, b"\n")
            declined += 1
    proc.wait(timeout=CLI_TIMEOUT)
    return ANSI.sub("", seen.decode(errors="replace"))


def default_memory(home: Path) -> Path:
    """Where a process whose home is `home` keeps its memory when MEMORY_DIR is unset (as
    platformdirs names the data directory on this platform), asked of a fresh process."""
    code = "from deep_research.config.endpoints import default_memory_dir as d; print(d())"
    env = {"HOME": str(home), "PYTHONPATH": str(REPO), "DEEP_RESEARCH_DOTENV": "0"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return Path(done.stdout.strip())
