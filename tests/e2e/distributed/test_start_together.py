"""Instances started at the same moment on a fresh database all come up (a platform starts
N replicas at once): the launcher prepares the schema one instance at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.agent_cluster import agent_cluster
from tests.support.cluster_brain import ClusterBrain
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_three_instances_started_together_on_a_fresh_database_are_all_ready(
    tmp_path: Path, postgres_dsn: str, redis_url: str
) -> None:
    with (
        ScriptedOpenAIServer(ClusterBrain()) as model,
        FakeTavilyServer() as tavily,
        agent_cluster(
            tmp_path, model, tavily, postgres_dsn, redis_url, count=3, together=True
        ) as cluster,
    ):
        logs = [instance.log.read_text(errors="replace") for instance in cluster.instances]
        assert all(instance.proc.poll() is None for instance in cluster.instances)
    assert not any("UniqueViolation" in log or "startup failed" in log for log in logs), logs
