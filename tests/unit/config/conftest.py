"""What the `.env` tests share: `.env` switched on and not yet loaded, and the user's own
`.env` in a config directory of the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import envfile as envfile_support


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """`.env` switched on and not yet loaded, in an empty directory that is the cwd
    (`clean_env` restores what loading it writes to `os.environ`)."""
    envfile_support.switched_on(monkeypatch)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def user_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the user's own `.env` is, in a config directory of the test's own."""
    config = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    (config / "deep-research").mkdir()
    return config / "deep-research" / ".env"
