"""Rendering in a child process with a deadline and a memory cap: an export always ends.

A report is model output, and a layout engine's cost is not its length's: a table, a
nesting or a line that WeasyPrint or pandoc lays out slowly can take minutes and gigabytes
from a report far under the size limit. So every format renders in a fresh Python process
that caps its own address space (`RLIMIT_AS`, inherited by pandoc) and that the caller
kills at `EXPORT_SECONDS`; either limit reached is an `ExportLimitError` naming it, and the
caller (the CLI, the MCP tool) still has the report's Markdown, which it never loses.
The report, the format and `ReportInfo` go to the child as JSON on stdin; the file's bytes
come back on stdout, and a failure as one line on stderr.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
from typing import Any

from deep_research.errors import ReadableError
from deep_research.export.needs import ExportUnavailableError

# A 2,000-citation PDF takes ~10 s and ~300 MB (docs/export.md), a 20,000-row table ~2 min
# on a shared 2-core machine: the limits leave room for a slow machine, not for a stall.
EXPORT_SECONDS = 300
EXPORT_MEMORY_MB = 3_000  # address space, not resident memory: libraries map more than they use
# The child's exit codes for what it could say itself.
READABLE, NO_MEMORY, UNAVAILABLE = 3, 4, 5
# `formats.child` does the work; `-c`, as the package's `__init__` imports it already.
_CHILD = "import sys; from deep_research.export.formats import child; sys.exit(child(sys.argv[1]))"


class ExportError(ReadableError, ValueError):
    """The report cannot be exported as asked (unknown format, too large, unreadable)."""


class ExportLimitError(ExportError):
    """The export ran past its time or memory limit; the message names the limit."""


def render_in_child(
    markdown: str,
    to: str,
    info: Any,
    *,
    seconds: float = EXPORT_SECONDS,
    memory_mb: int = EXPORT_MEMORY_MB,
) -> bytes:
    """`formats.draw(markdown, to, info)`, run by `formats.child` in a fresh process under
    `seconds` and `memory_mb`."""
    facts = dataclasses.asdict(info)
    facts["library"] = sorted(info.library)
    payload = json.dumps({"markdown": markdown, "to": to, "info": facts}, default=str)
    # `-P`: a `weasyprint.py` in the working directory is never imported by the child.
    command = [sys.executable, "-P", "-c", _CHILD, str(memory_mb)]
    try:
        done = _run(command, payload.encode("utf-8"), seconds)
    except subprocess.TimeoutExpired:  # the child and what it started (pandoc) are killed
        raise ExportLimitError(
            f"the {to} export took over its limit of {seconds:g} s and was stopped; "
            "the report is unchanged: shorten it (a long table, say), or export it as html"
        ) from None
    if done.returncode == 0:
        return done.stdout
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    last = said[-1][-600:] if said else ""
    if done.returncode == UNAVAILABLE:
        raise ExportUnavailableError(last)
    if done.returncode == READABLE:
        raise ExportError(last)
    if done.returncode == NO_MEMORY or "MemoryError" in last:
        raise ExportLimitError(
            f"the {to} export needed more than its limit of {memory_mb:,} MB of memory and "
            "was stopped; the report is unchanged: shorten it, or export it as html"
        )
    if done.returncode < 0:  # a C library that cannot allocate may crash rather than say so
        raise ExportLimitError(
            f"the {to} export's process died (signal {-done.returncode}), most likely at its "
            f"limit of {memory_mb:,} MB of memory; the report is unchanged: shorten it, or "
            "export it as html"
        )
    raise ExportLimitError(
        f"the {to} export failed (exit {done.returncode}) under its limits of {seconds:g} s "
        f"and {memory_mb:,} MB: {last or 'no message'}"
    )


def cap_memory(memory_mb: int) -> None:
    """Cap this process's address space (the child's first step; pandoc inherits it)."""
    try:
        import resource
    except ImportError:  # Windows: no rlimits; the deadline still holds
        return
    cap = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _run(command: list[str], data: bytes, seconds: float) -> subprocess.CompletedProcess[bytes]:
    """`command` fed `data`, in a process group of its own: past `seconds` the whole group
    is killed, so a pandoc the child started does not go on converting."""
    with subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as child:
        try:
            out, err = child.communicate(data, timeout=seconds)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            raise
    return subprocess.CompletedProcess(command, child.returncode, out, err)
