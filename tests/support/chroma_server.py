"""A real Chroma server (`chroma run`, installed by chromadb), started offline for a test."""

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

from tests.support.langgraph_dev import free_port

STARTUP_DEADLINE = 60.0


@contextlib.contextmanager
def chroma_server(data: Path, log: Path) -> Iterator[int]:
    """`chroma run` on 127.0.0.1 storing in `data`; yields its port, stops it after."""
    port = free_port()
    binary = Path(sys.executable).parent / "chroma"
    command = [str(binary), "run", "--path", str(data), "--port", str(port)]
    command += ["--host", "127.0.0.1"]
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_PROXY": "127.0.0.1"}
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
