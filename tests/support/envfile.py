"""`.env` reading switched on and not yet done, as for a user's first run (tests run with it
off: `clean_env` restores whatever loading it writes to `os.environ`)."""

from __future__ import annotations

import pytest

from deep_research.config import envfile


def switched_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(envfile.OPT_OUT)
    monkeypatch.setattr(envfile, "_loaded", False)
    monkeypatch.setattr(envfile, "_origin", {})
    monkeypatch.setattr(envfile, "_read", [])
    monkeypatch.setattr(envfile, "_refused", [])
    monkeypatch.setattr(envfile, "_unkeyed", [])
