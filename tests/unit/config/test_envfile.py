"""`config.envfile`: which `.env` values are set, once per process, and where each came from.

The end-to-end precedence (run > environment > `.env` > default) and the warnings on bad
files are tested through the CLI in tests/integration/test_dotenv.py; these call the
functions directly.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from deep_research.config import envfile


@pytest.mark.parametrize(("value", "off"), [("0", True), (" No ", True), ("1", False), ("", False)])
def test_disabled_reads_the_opt_out(value: str, off: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(envfile.OPT_OUT, value)
    assert envfile.disabled() is off


def test_load_sets_only_what_is_missing_and_not_empty(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text('A=from-file\nB=\nC="quoted value"\nD=kept-out\n')
    environ = {"D": "already"}
    assert envfile.load(path, environ) == ["A", "C"]
    assert environ == {"D": "already", "A": "from-file", "C": "quoted value"}


def test_a_missing_file_is_none_read(tmp_path: Path) -> None:
    assert envfile.load(tmp_path / "absent.env", {}) is None


def test_load_once_reads_the_file_once_and_says_where_each_value_came_from(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DR_TEST_VALUE", raising=False)
    (fresh / ".env").write_text("DR_TEST_VALUE=one\n")
    try:
        assert envfile.load_once() == [fresh / ".env"]
        assert os.environ["DR_TEST_VALUE"] == "one"
        assert envfile.source_of("DR_TEST_VALUE") == f"DR_TEST_VALUE in {fresh / '.env'}"
        assert envfile.load_once() == [], "a second call reads nothing"
        assert envfile.files_read() == [fresh / ".env"]
        monkeypatch.setenv("DR_TEST_VALUE", "two")
        assert envfile.source_of("DR_TEST_VALUE") == "environment variable DR_TEST_VALUE"
    finally:
        os.environ.pop("DR_TEST_VALUE", None)


def test_without_a_file_load_once_finds_nothing(fresh: Path) -> None:
    assert envfile.load_once() == [] and not envfile._origin and envfile.files_read() == []


def test_the_users_env_is_read_from_any_folder_below_the_projects(
    fresh: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DR_TEST_A", "DR_TEST_B"):
        monkeypatch.delenv(name, raising=False)
    user_env.write_text("DR_TEST_A=user\nDR_TEST_B=user\n")
    (fresh / ".env").write_text("DR_TEST_A=project\n")
    try:
        assert envfile.load_once() == [fresh / ".env", user_env]
        assert (os.environ["DR_TEST_A"], os.environ["DR_TEST_B"]) == ("project", "user")
        assert envfile.source_of("DR_TEST_B") == f"DR_TEST_B in {user_env}"
    finally:
        for name in ("DR_TEST_A", "DR_TEST_B"):
            os.environ.pop(name, None)


def test_the_users_env_alone_configures_a_folder_without_one(
    fresh: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DR_TEST_A", raising=False)
    user_env.write_text("DR_TEST_A=user\n")
    try:
        assert envfile.load_once() == [user_env] and os.environ["DR_TEST_A"] == "user"
    finally:
        os.environ.pop("DR_TEST_A", None)


def test_the_users_env_is_read_once_when_it_is_also_the_nearest(
    fresh: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_env.write_text("DR_TEST_A=user\n")
    monkeypatch.chdir(user_env.parent)
    try:
        assert envfile.load_once() == [user_env]
    finally:
        os.environ.pop("DR_TEST_A", None)


def test_an_unreadable_users_env_is_not_counted_as_read(fresh: Path, user_env: Path) -> None:
    user_env.write_bytes(b"DR_TEST_A=\xff\xfe\n")
    assert envfile.load_once() == [] and "DR_TEST_A" not in os.environ


def test_a_variable_never_in_a_file_is_named_as_the_environments(fresh: Path) -> None:
    assert envfile.source_of("LLM_TIMEOUT") == "environment variable LLM_TIMEOUT"


@pytest.mark.parametrize("config_home", [None, "", "  ", "/tmp/xdg-elsewhere"])
def test_the_users_env_is_where_platformdirs_says(
    config_home: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worked out without platformdirs on Linux (for a fast `--help`), the same path."""
    import platformdirs

    if config_home is None:
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CONFIG_HOME", config_home)
    expected = platformdirs.user_config_path(envfile.APP_NAME) / ".env"
    assert envfile.user_env_path() == expected


@pytest.mark.parametrize(
    "name",
    [
        "MCP_SERVERS_FILE",
        "RENDER_BROWSER",
        "mcp_servers_file",
        "EDITOR",
        "PATH",
        "LD_PRELOAD",
        "PYTHONPATH",
        "NODE_OPTIONS",
        "PLAYWRIGHT_NODEJS_PATH",
    ],
)
def test_a_projects_env_may_not_name_a_program_to_run(
    name: str,
    fresh: Path,
    user_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A cloned repository's `.env` cannot make `deep-research` run a program of its choice."""
    monkeypatch.delenv(name, raising=False)
    (fresh / ".env").write_text(f"{name}=/tmp/evil-secret-value\nDR_TEST_A=project\n")
    try:
        with caplog.at_level(logging.WARNING):
            assert envfile.load_once() == [fresh / ".env"]
        assert name not in os.environ and os.environ["DR_TEST_A"] == "project"
        assert envfile.refused() == [name], "for doctor"
        [record] = caplog.records
        assert record.getMessage() == (
            f"ignored {name} in {fresh / '.env'}: a project's .env may not name a program to "
            f"run; set it in the environment or in your own {user_env}"
        )
        assert "evil-secret-value" not in caplog.text
    finally:
        os.environ.pop("DR_TEST_A", None)


def test_the_users_own_env_and_the_environment_may_name_one(
    fresh: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCP_SERVERS_FILE", raising=False)
    monkeypatch.setenv("RENDER_BROWSER", "from-environment")
    (fresh / ".env").write_text("MCP_SERVERS_FILE=project.json\nRENDER_BROWSER=project\n")
    user_env.write_text("MCP_SERVERS_FILE=/home/me/servers.json\n")
    try:
        assert envfile.load_once() == [fresh / ".env", user_env]
        assert os.environ["MCP_SERVERS_FILE"] == "/home/me/servers.json"
        assert os.environ["RENDER_BROWSER"] == "from-environment"
    finally:
        os.environ.pop("MCP_SERVERS_FILE", None)


def test_the_users_env_keeps_its_programs_when_it_is_also_the_nearest(
    fresh: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RENDER_BROWSER", raising=False)
    user_env.write_text("RENDER_BROWSER=/opt/chrome\n")
    monkeypatch.chdir(user_env.parent)
    assert envfile.load_once() == [user_env] and os.environ["RENDER_BROWSER"] == "/opt/chrome"
