"""The terminal reader the CLI tests share works on any descriptor a long session hands out."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.cli import read_until

HIGH_FD = 1500  # select() refuses a descriptor past 1023; a full run's worker reached 1082


@pytest.fixture
def high_pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    try:
        os.dup2(read_end, HIGH_FD)
    except OSError:
        pytest.skip("this process may not hold a descriptor that high")
    try:
        yield HIGH_FD, write_end
    finally:
        for fd in (HIGH_FD, read_end, write_end):
            try:
                os.close(fd)
            except OSError:
                pass


def test_a_terminal_on_a_descriptor_past_1023_is_read(high_pipe: tuple[int, int]) -> None:
    fd, write_end = high_pipe
    os.write(write_end, b"report\nfollow-up> ")
    seen = bytearray()
    read_until(fd, b"follow-up> ", seen)
    assert bytes(seen) == b"report\nfollow-up> "


def test_a_closed_terminal_ends_the_read(high_pipe: tuple[int, int]) -> None:
    fd, write_end = high_pipe
    os.write(write_end, b"partial")
    os.close(write_end)
    seen = bytearray()
    read_until(fd, b"never shown", seen)
    assert bytes(seen) == b"partial"
