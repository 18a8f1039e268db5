"""Stopping a service the tests started: by its PID, then its process group if it lingers."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess


def stop(proc: subprocess.Popen[bytes], sig: signal.Signals, deadline: float) -> None:
    """Send `sig` (the service's own clean shutdown) and wait up to `deadline` seconds; then
    SIGKILL the process group it was started in (`start_new_session=True`)."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
