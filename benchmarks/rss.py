"""This process's own peak resident memory, in MB.

`getrusage(RUSAGE_SELF).ru_maxrss` is not it for a child process on Linux: exec keeps the
high-water mark of the memory it replaced, so a process started by a 1.6 GB parent (a
pytest worker) reports at least 1.6 GB before it has done anything. `VmHWM` in
/proc/self/status is the peak of the process's own address space. Elsewhere (macOS, where
`ru_maxrss` is in bytes, not KB) `ru_maxrss` is the best there is.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

STATUS = Path("/proc/self/status")


def own_peak_mb() -> float:
    """The peak resident memory of this process's own address space, in MB."""
    try:
        for line in STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):  # unreadable, not UTF-8, a malformed line
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024
