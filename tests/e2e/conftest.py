"""The `langgraph dev` server the e2e modules share: one per module, as each module asks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.brain import ResearchBrain
from tests.support.langgraph_dev import DevServer, dev_server


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DevServer]:
    """One server for the module: starting `langgraph dev` costs seconds, and each test runs
    on its own thread. The module's `BRAIN` (a brain class, `ResearchBrain` unless named)
    answers behind it, and its `SERVER_ENV` is added to the server's environment."""
    module = request.module
    brain = getattr(module, "BRAIN", ResearchBrain)
    extra_env: dict[str, str] = getattr(module, "SERVER_ENV", {})
    tmp_path = tmp_path_factory.mktemp("langgraph-dev-" + module.__name__.rsplit(".", 1)[-1])
    with dev_server(tmp_path, brain(), extra_env) as server:
        yield server
