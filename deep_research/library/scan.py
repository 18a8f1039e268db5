"""Which files `library add PATH…` looks at: folders walked, each candidate classified.

Only regular files are read (a FIFO or device would block or never end); a symlink inside
a folder is followed only when it stays inside that folder, and one that leaves it (to a
file or a folder) is reported; a file whose name is not UTF-8 is reported, not indexed;
files are read up to `MAX_FILE_BYTES` and hashed, so an unchanged file is recognised
without parsing it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from deep_research.library.readers import MAX_FILE_BYTES, MAX_HTML_BYTES, kind_of

MAX_FILES = 20_000  # candidates per `add`; a folder with more is cut and says so


@dataclass(frozen=True)
class Candidate:
    path: Path  # resolved, absolute
    status: str = ""  # why it is not read: "unsupported", "oversized", "skipped", "unreadable"
    problem: str = ""  # the details, in fixed words


@dataclass(frozen=True)
class Loaded:
    path: Path
    raw: bytes
    sha256: str


def candidates(paths: list[Path]) -> Iterator[Candidate]:
    """Every file named or found under a named folder, at most `MAX_FILES` of them."""
    seen: set[Path] = set()
    for given in paths:
        for candidate in _expand(given):
            if candidate.path in seen:
                continue
            seen.add(candidate.path)
            if len(seen) > MAX_FILES:
                yield Candidate(
                    given, "skipped", f"more than {MAX_FILES:,} files: the rest not read"
                )
                return
            yield candidate


def _expand(given: Path) -> Iterator[Candidate]:
    try:
        root = given.resolve(strict=True)
    except (OSError, RuntimeError):  # missing, or a symlink loop
        yield Candidate(given.absolute(), "unreadable", "not found")
        return
    if not root.is_dir():
        yield classify(root)
        return
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in dirs:  # not walked into (their files under the folder are reached anyway)
            path = Path(folder, name)
            if path.is_symlink() and not path.resolve().is_relative_to(root):
                yield Candidate(path, "skipped", "symlink to a folder outside the folder")
        for name in sorted(files):
            path = Path(folder, name)
            try:
                target = path.resolve(strict=True)
            except (OSError, RuntimeError):
                yield Candidate(path, "skipped", "broken symlink")
                continue
            if not target.is_relative_to(root):
                yield Candidate(path, "skipped", "symlink leads outside the folder")
                continue
            yield classify(target)


def classify(path: Path) -> Candidate:
    if not is_text(str(path)):
        # The store keeps a path as UTF-8 text: a name in other bytes cannot be its key.
        return Candidate(path, "skipped", "file name is not UTF-8; rename the file to add it")
    kind = kind_of(path)
    if kind is None:
        return Candidate(path, "unsupported", "not a format the library reads")
    try:
        info = path.stat()
    except OSError:
        return Candidate(path, "unreadable", "cannot stat")
    if not stat.S_ISREG(info.st_mode):
        return Candidate(path, "skipped", "not a regular file")
    most = MAX_HTML_BYTES if kind == "html" else MAX_FILE_BYTES
    if info.st_size > most:
        limit = f"{info.st_size:,} bytes; the limit is {most:,}"
        return Candidate(path, "oversized", limit)
    return Candidate(path)


def is_text(name: str) -> bool:
    """Whether `name` is text: Python keeps a file name's undecodable bytes as surrogates."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def load(path: Path) -> Loaded:
    """The file's bytes and their SHA-256; raises OSError, or ValueError if it grew too big.

    `path` was resolved and classified moments ago, but the file may have been swapped
    since: no symlink is opened (it could lead out of the folder), and a FIFO is opened
    without blocking and refused.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with os.fdopen(os.open(path, flags), "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValueError("not a regular file")
        raw = handle.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:  # it grew since it was classified
        raise ValueError(f"oversized (over {MAX_FILE_BYTES:,} bytes)")
    return Loaded(path, raw, hashlib.sha256(raw).hexdigest())
