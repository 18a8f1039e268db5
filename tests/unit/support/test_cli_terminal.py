"""The terminal reader the CLI tests share works on any descriptor a long session hands out."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator

import pytest

from tests.support.cli import read_until

# select() refuses a descriptor past 1023; a full run's worker reached 1082.
PAST_SELECT = 1024


class Pipe:
    """A pipe whose reading end is a descriptor past select's reach."""

    def __init__(self) -> None:
        read_end, self.write_end = os.pipe()
        try:
            self.read_end = fcntl.fcntl(read_end, fcntl.F_DUPFD, PAST_SELECT)  # a free one
        finally:
            os.close(read_end)
        self.open = {self.read_end, self.write_end}

    def close(self, fd: int) -> None:
        if fd in self.open:
            self.open.discard(fd)
            os.close(fd)


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    made = Pipe()
    try:
        yield made
    finally:
        for fd in list(made.open):
            made.close(fd)


def test_a_terminal_on_a_descriptor_past_1023_is_read(pipe: Pipe) -> None:
    assert pipe.read_end >= PAST_SELECT
    os.write(pipe.write_end, b"report\nfollow-up> ")
    seen = bytearray()
    read_until(pipe.read_end, b"follow-up> ", seen)
    assert bytes(seen) == b"report\nfollow-up> "


def test_a_closed_terminal_ends_the_read(pipe: Pipe) -> None:
    os.write(pipe.write_end, b"partial")
    pipe.close(pipe.write_end)
    seen = bytearray()
    read_until(pipe.read_end, b"never shown", seen)
    assert bytes(seen) == b"partial"


def test_a_descriptor_that_is_not_open_is_an_error(pipe: Pipe) -> None:
    gone = pipe.read_end
    pipe.close(gone)
    with pytest.raises(AssertionError, match="is not open"):
        read_until(gone, b"anything", bytearray())
