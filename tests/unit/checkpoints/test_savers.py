"""checkpoints.open_checkpointer: the SQLite file by default, PostgreSQL when the variable says."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph

from deep_research.checkpoints import VARIABLE, CheckpointsConfigError, open_checkpointer
from tests.support.langgraph_dev import free_port


class Count(TypedDict):
    n: int


def _graph() -> StateGraph[Any]:
    graph = StateGraph(Count)
    graph.add_node("add", lambda state: {"n": state["n"] + 1})
    graph.add_edge(START, "add")
    graph.add_edge("add", END)
    return graph


async def test_default_is_the_sqlite_file_and_threads_outlive_the_saver(tmp_path: Path) -> None:
    file = tmp_path / "deep" / "checkpoints.sqlite"
    async with open_checkpointer(sqlite=file) as saver:
        assert isinstance(saver, AsyncSqliteSaver)
        await _graph().compile(checkpointer=saver).ainvoke({"n": 1}, _thread("t"))
    assert file.is_file()
    async with open_checkpointer(sqlite=file) as saver:
        state = await _graph().compile(checkpointer=saver).aget_state(_thread("t"))
    assert state.values == {"n": 2}


@pytest.mark.slow
async def test_a_postgres_url_keeps_threads_in_the_database(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(VARIABLE, postgres_dsn)
    monkeypatch.chdir(tmp_path)
    async with open_checkpointer() as saver:
        assert isinstance(saver, AsyncPostgresSaver)
        await _graph().compile(checkpointer=saver).ainvoke({"n": 40}, _thread("p"))
    async with open_checkpointer() as saver:  # a new connection: the thread is there
        state = await _graph().compile(checkpointer=saver).aget_state(_thread("p"))
    assert state.values == {"n": 41}
    assert list(tmp_path.iterdir()) == [], "no local file"


async def test_an_unreachable_server_is_a_config_error_without_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = free_port()
    monkeypatch.setenv(VARIABLE, f"postgresql://u:Hunter2-secret@127.0.0.1:{port}/db")
    with pytest.raises(CheckpointsConfigError, match=f"127.0.0.1:{port}/db") as caught:
        async with open_checkpointer():
            pass
    assert "Hunter2-secret" not in str(caught.value)


def _thread(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


async def test_the_checkpoint_folder_is_the_users_only(tmp_path: Path) -> None:
    folder = tmp_path / ".deep_research"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # made by an older version under umask 022
    async with open_checkpointer(sqlite=folder / "checkpoints.sqlite"):
        pass
    assert folder.stat().st_mode & 0o777 == 0o700


async def test_a_folder_the_user_named_is_left_as_it_is_and_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    theirs = tmp_path / "work"  # the working directory of `sqlite="runs.sqlite"`, or $HOME
    theirs.mkdir()
    theirs.chmod(0o755)
    notes = theirs / "notes.txt"
    notes.write_text("")
    notes.chmod(0o644)
    old = os.umask(0o022)
    try:
        async with open_checkpointer(sqlite=theirs / "runs.sqlite"):
            pass
    finally:
        os.umask(old)
    assert [mode(p) for p in (theirs, notes, theirs / "runs.sqlite")] == [0o755, 0o644, 0o600]
    assert "open to other users" in caplog.text


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)
