"""Directories only their user may enter: memory, the library, checkpoints, reports.

On a machine with other users a directory made with the default umask (0755) lets any of
them read what the agent keeps: past research, private documents, checkpointed runs. So
every directory the agent makes for them is 0700, and one it owns by name (the memory
directory, `.deep_research/`) that is open to others (made by an older version, or by hand)
is closed again when the agent opens it, through a symbolic link too. A folder the user
named for a file (`sqlite="runs.sqlite"` in the working directory, `~/x.sqlite`) is the
user's, not the agent's: it is left as it is, and said when others may enter it. A directory
of another user's is left alone and said: the agent does not own it.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
OPEN_TO_OTHERS = 0o077  # group and other bits
MAX_ENTRIES = 1000  # the files directly inside a directory that are closed on open


def private_directory(path: Path) -> Path:
    """`path`, a directory the agent owns by name, made (with its missing parents) or closed
    to other users: 0700, and the files directly inside it readable only by their user.
    A link is followed: the directory it names is the one closed. OSError if it cannot be
    made."""
    real = path.resolve()
    made = _make(real)
    if real not in made:
        _close(real)
    try:
        with os.scandir(real) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_ENTRIES:
                    break
                if entry.is_file(follow_symlinks=False):
                    _close(Path(entry.path))
    except OSError as error:
        log.warning("%s: its files could not be checked (%s)", path, error)
    return path


def folder_for_file(path: Path) -> Path:
    """The folder `path` (a file the user named) goes in: made 0700 with its missing parents,
    as the agent makes them; one that exists is the user's, left as it is, and said (to the
    log) when others may enter it. OSError if it cannot be made."""
    folder = path.parent
    if not _make(folder.resolve()):
        try:
            if os.stat(folder).st_mode & OPEN_TO_OTHERS:
                log.warning(
                    "%s is open to other users: they may read %s; keep it in a folder of "
                    "your own (chmod 700)",
                    folder,
                    path.name,
                )
        except OSError as error:
            log.warning("%s could not be checked (%s)", folder, error)
    return folder


def private_file(path: Path) -> Path:
    """`path` created empty and 0600 if it does not exist; one that does is left as it is."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except FileExistsError:
        pass
    return path


def _make(path: Path) -> list[Path]:
    """The directories made for `path` (it and its missing parents), each 0700."""
    missing = [parent for parent in (path, *path.parents) if not parent.exists()]
    path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    for made in missing:  # mkdir's `mode` applies to the last one only, and umask narrows it
        _close(made)
    return missing


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
