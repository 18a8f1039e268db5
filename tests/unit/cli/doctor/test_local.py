"""`deep-research doctor`'s checks of this machine's own setup: the `.env` files read,
tracing, directories and where the memory is."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
import pytest

from deep_research.cli.doctor.local import (
    check_memory,
    check_settings,
    check_tracing,
    check_writable,
)
from deep_research.config import envfile


@pytest.fixture
def tracing_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_TRACING_V2"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("LANGCHAIN_TRACING", raising=False)
    return monkeypatch


def test_settings_name_the_env_files_read_nearest_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(envfile.OPT_OUT)
    monkeypatch.setattr(envfile, "_read", [tmp_path / ".env", tmp_path / "user.env"])
    check = check_settings()
    assert check.status == "ok"
    assert check.detail.startswith(f"read {tmp_path / '.env'}, {tmp_path / 'user.env'} (")


def test_settings_warn_of_a_program_a_project_s_env_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(envfile.OPT_OUT)
    monkeypatch.setattr(envfile, "_read", [tmp_path / ".env"])
    monkeypatch.setattr(envfile, "_refused", ["MCP_SERVERS_FILE", "RENDER_BROWSER"])
    check = check_settings()
    assert check.status == "warn"
    assert check.detail.endswith(
        f"; ignored MCP_SERVERS_FILE, RENDER_BROWSER from {tmp_path / '.env'}: a project's "
        ".env may not name a program to run"
    )
    assert check.fix == f"set it in the environment or in {envfile.user_env_path()}"


def test_settings_warn_of_an_endpoint_a_project_s_env_set_without_its_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(envfile.OPT_OUT)
    monkeypatch.setattr(envfile, "_read", [tmp_path / ".env"])
    monkeypatch.setattr(
        envfile,
        "_unkeyed",
        [("LLM_BASE_URL", ["LLM_API_KEY"]), ("LANGSMITH_ENDPOINT", ["LANGSMITH_API_KEY"])],
    )
    check = check_settings()
    assert check.status == "warn"
    assert check.detail.endswith(
        f"; ignored LLM_BASE_URL, LANGSMITH_ENDPOINT from {tmp_path / '.env'}: a project's "
        ".env may not send keys set elsewhere (LLM_API_KEY, LANGSMITH_API_KEY) to an endpoint "
        "of its own"
    )
    assert check.fix == (
        f"set the endpoint in the environment or in {envfile.user_env_path()}, or its key in "
        f"{tmp_path / '.env'} too"
    )


def test_settings_without_an_env_file_say_where_they_looked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(envfile.OPT_OUT)
    monkeypatch.setattr(envfile, "_read", [])
    monkeypatch.chdir(tmp_path)
    detail = check_settings().detail
    assert detail.startswith("no .env found") and str(tmp_path) in detail
    assert str(envfile.user_env_path()) in detail


def test_settings_with_env_files_switched_off_say_so() -> None:
    assert envfile.OPT_OUT in check_settings().detail  # conftest switches them off


def test_tracing_on_without_a_langsmith_key_warns_naming_the_variables(
    tracing_env: pytest.MonkeyPatch,
) -> None:
    assert check_tracing().detail == "LangSmith tracing is off"
    tracing_env.setenv("LANGCHAIN_TRACING_V2", "true")
    check = check_tracing()
    assert check.status == "warn"
    assert "LANGCHAIN_TRACING_V2=true" in check.detail and "LANGSMITH_API_KEY" in check.detail
    tracing_env.setenv("LANGCHAIN_API_KEY", "lsv2_pt_SECRET0123456789")
    check = check_tracing()
    assert check.status == "ok" and "SECRET" not in check.detail


def test_a_file_in_place_of_a_directory_is_not_writable(tmp_path: Path) -> None:
    blocked = tmp_path / "reports"
    blocked.write_text("not a directory")
    check = check_writable(blocked, "report dir")
    assert check.status == "fail"
    assert check.detail == f"{blocked} is a file, not a directory"


def test_directories_are_tested_by_writing_and_left_as_they_were(tmp_path: Path) -> None:
    existing = tmp_path / ".deep_research"
    existing.mkdir()
    assert check_writable(existing, "checkpoint dir").detail == f"{existing}/ is writable"
    absent = check_writable(tmp_path / "reports", "report dir")
    assert absent.status == "ok" and "will be created on the first run" in absent.detail
    assert sorted(p.name for p in tmp_path.iterdir()) == [".deep_research"]
    assert list(existing.iterdir()) == []


@pytest.mark.parametrize(
    ("environ", "status", "says"),
    [
        ({"LANGSMITH_TRACING": "True"}, "ok", "off"),  # only exactly "true" traces
        ({"LANGSMITH_TRACING_V2": "false", "LANGSMITH_TRACING": "true"}, "ok", "off"),
        ({"LANGSMITH_TRACING_V2": " ", "LANGSMITH_TRACING": "true"}, "warn", "LANGSMITH_TRACING="),
        ({"LANGCHAIN_TRACING": "true", "LANGSMITH_API_KEY": "k"}, "ok", "with a key"),
    ],
)
def test_tracing_reads_the_first_variable_set_as_langsmith_does(
    environ: dict[str, str], status: str, says: str
) -> None:
    check = check_tracing(environ)
    assert check.status == status and says in check.detail


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """MEMORY_DIR unset, the user's home (and XDG data directory) in `tmp_path`, working in
    `tmp_path/work`: the default memory's directory, as platformdirs names it here."""
    monkeypatch.delenv("MEMORY_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / "data"))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    memory = platformdirs.user_data_path("deep-research") / "memory"
    assert memory.is_relative_to(tmp_path / "home")  # not the working directory's
    return memory


def test_memory_is_shown_where_it_really_is_by_default_the_data_directory(
    data_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = check_memory(True)
    assert check.status == "ok", check
    assert check.detail.startswith(f"{data_home} (your data directory")
    # MEMORY_DIR, relative, is the working directory's: shown absolute.
    monkeypatch.setenv("MEMORY_DIR", "here/memory")
    assert check_memory(True).detail.startswith(
        f"{tmp_path / 'work' / 'here' / 'memory'} (environment variable MEMORY_DIR"
    )
    assert "off" in check_memory(False).detail


def test_memory_left_in_the_old_project_local_place_is_named_with_how_to_keep_it(
    data_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = tmp_path / "work" / ".deep_research" / "memory"
    old.mkdir(parents=True)
    (old / "chroma.sqlite3").write_bytes(b"")
    check = check_memory(True)
    assert check.status == "warn" and ".deep_research/memory/ " in check.detail
    assert check.fix == "set MEMORY_DIR=.deep_research/memory to keep using it here, or leave it"
    monkeypatch.setenv("MEMORY_DIR", ".deep_research/memory")  # kept: nothing to say
    assert check_memory(True).status == "ok"


def test_memory_that_cannot_be_written_fails_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("MEMORY_DIR", str(blocker / "memory"))
    check = check_memory(True)
    assert check.status == "fail" and "is a file" in check.detail
    assert check.fix == "set MEMORY_DIR to a directory you can write in"
    assert os.environ["MEMORY_DIR"] in check.detail
