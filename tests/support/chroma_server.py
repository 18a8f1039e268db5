"""A real Chroma server, started offline for a test: `chroma run`, or with a token the one
docs/distributed.md starts (chromadb's own app, its token authentication set by environment:
`chroma run`'s server takes no credentials)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from deep_research.memory.keeper import TOKEN_AUTHN
from tests.support.langgraph_dev import free_port

STARTUP_DEADLINE = 60.0


# As `uvicorn chromadb.app:app`, with OpenTelemetry's FastAPI instrumentation, which chromadb
# imports but does not install, stood in for as the keeper does.
APP = """
import sys, uvicorn
from deep_research.memory.keeper import fastapi_server
fastapi_server()
uvicorn.run("chromadb.app:app", host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


@contextlib.contextmanager
def chroma_server(data: Path, log: Path, token: str | None = None) -> Iterator[int]:
    """A Chroma server on 127.0.0.1 storing in `data`, asking for `token` when given;
    yields its port, stops it after."""
    port = free_port()
    binary = Path(sys.executable).parent / "chroma"
    command = [str(binary), "run", "--path", str(data), "--port", str(port)]
    command += ["--host", "127.0.0.1"]
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_PROXY": "127.0.0.1"}
    if token is not None:
        command = [sys.executable, "-c", APP, str(port)]
        env |= {
            "IS_PERSISTENT": "TRUE",
            "PERSIST_DIRECTORY": str(data),
            "CHROMA_SERVER_AUTHN_PROVIDER": TOKEN_AUTHN,
            "CHROMA_SERVER_AUTHN_CREDENTIALS": token,
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        }
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        _wait_until_ready(port, proc, log)
        yield port
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _wait_until_ready(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE
    url = f"http://127.0.0.1:{port}/api/v2/heartbeat"
    with httpx.Client(trust_env=False, timeout=2.0) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"chroma run exited with {proc.returncode}:\n{log.read_text()}")
            try:
                if http.get(url).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.25)  # polling a starting server, not synchronising with it
    pytest.fail(f"chroma run not ready after {STARTUP_DEADLINE:.0f}s:\n{log.read_text()}")
