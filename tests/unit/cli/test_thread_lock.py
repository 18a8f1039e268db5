"""One process per thread in a directory: a second holder is refused, the first lets go."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.cli.args import UsageError
from deep_research.cli.runs import BadThreadIdError, Home
from deep_research.cli.thread_lock import only_session


def test_a_second_session_of_a_thread_is_refused_while_the_first_holds_it(tmp_path: Path) -> None:
    home = Home(tmp_path / ".deep_research")
    with only_session(home, "abc12345"):
        with pytest.raises(UsageError, match="running in another process"):
            with only_session(home, "abc12345"):
                pass
        with only_session(home, "other123"):  # another thread is not held
            pass
    with only_session(home, "abc12345"):  # released
        pass


def test_a_thread_id_that_names_a_path_is_refused(tmp_path: Path) -> None:
    home = Home(tmp_path / ".deep_research")
    with pytest.raises(BadThreadIdError):
        with only_session(home, "../escape"):
            pass
    assert not (tmp_path / "escape.lock").exists()
