"""Directories only their user may enter: memory, the library, checkpoints, reports.

On a machine with other users a directory made with the default umask (0755) lets any of
them read what the agent keeps: past research, private documents, checkpointed runs. So
every directory the agent makes for them is 0700, and one of the user's that is open to
others (made by an older version, or by hand) is closed again when the agent opens it.
A directory of another user's is left alone and said: the agent does not own it.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_DIR = 0o700
OPEN_TO_OTHERS = 0o077  # group and other bits
MAX_ENTRIES = 1000  # the files directly inside a directory that are closed on open


def private_directory(path: Path) -> Path:
    """`path` made (with its missing parents) or closed to other users: 0700, and the
    files directly inside it readable only by their user. OSError if it cannot be made."""
    missing = [parent for parent in (path, *path.parents) if not parent.exists()]
    path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    for made in missing:  # mkdir's `mode` applies to the last one only
        _close(made)
    _close(path)
    try:
        with os.scandir(path) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_ENTRIES:
                    break
                if entry.is_file(follow_symlinks=False):
                    _close(Path(entry.path))
    except OSError as error:
        log.warning("%s: its files could not be checked (%s)", path, error)
    return path


def _close(path: Path) -> None:
    """Take group and other permissions off `path` if it is this user's."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode) or not info.st_mode & OPEN_TO_OTHERS:
            return
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            log.warning("%s belongs to another user and is open to others", path)
            return
        os.chmod(path, stat.S_IMODE(info.st_mode) & ~OPEN_TO_OTHERS)
    except FileNotFoundError:
        return
    except OSError as error:
        log.warning("%s could not be made private (%s)", path, error)
