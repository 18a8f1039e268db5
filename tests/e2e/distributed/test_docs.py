"""docs/distributed.md's commands are the ones CI and the tests run: the install lines are
`.ci/server`'s, the launch line is the one tests/support/agent_cluster.py starts, and the
compose file runs that same launcher with the variables the page names."""

from __future__ import annotations

import re
import shlex

import yaml

from tests.support.readme import REPO, block_after

CI_SERVER = (REPO / ".ci" / "server").read_text(encoding="utf-8")
PAGE = (REPO / "docs" / "distributed.md").read_text(encoding="utf-8")


def test_the_install_lines_are_what_ci_runs() -> None:
    lines = block_after("<!-- server-install").strip().splitlines()
    ci = [line for line in CI_SERVER.splitlines() if ".venv-server" in line and line[0] != "#"]
    assert [line.replace('"$python"', "python3.12") for line in ci] == lines


def test_the_launch_line_is_what_the_tests_start() -> None:
    [line] = block_after("<!-- server-launch").strip().splitlines()
    program, *args = shlex.split(line)
    assert program == ".venv-server/bin/python"
    assert args[:2] == ["-m", "deep_research.server"]
    flags = dict(zip(args[2::2], args[3::2], strict=True))
    assert flags == {"--host": "0.0.0.0", "--port": "2026", "--config": "aegra.json"}
    cluster = (REPO / "tests" / "support" / "agent_cluster.py").read_text(encoding="utf-8")
    for flag in flags:
        assert f'"{flag}"' in cluster


def test_the_compose_file_runs_the_same_launcher_with_the_pages_variables() -> None:
    compose = (REPO / "deploy" / "compose.yaml").read_text(encoding="utf-8")
    dockerfile = (REPO / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    assert '"deep_research.server", "--host", "0.0.0.0", "--port", "2026"' in dockerfile
    assert 'pip install --no-cache-dir -e ".[server]"' in dockerfile
    for name in (
        "DATABASE_URL",
        "REDIS_BROKER_ENABLED",
        "REDIS_URL",
        "DEEP_RESEARCH_SERVER_TOKEN",
        "WORKER_COUNT",
        "N_JOBS_PER_WORKER",
        "CHROMA_HOST",
        "LLM_BASE_URL",
    ):
        assert f"{name}:" in compose and name in PAGE, name


def test_the_numbers_come_from_the_benchmark_the_page_names() -> None:
    assert "`python -m benchmarks.distributed`" in PAGE
    numbers = PAGE.split("<!-- distributed-numbers -->")[1]
    assert "| instances | threads | seconds | threads/min | Postgres per thread |" in numbers
    assert "| lease | reaper every | SIGKILL → resumed elsewhere | finished |" in numbers


def test_the_recipe_asks_every_client_of_redis_and_chroma_for_a_secret() -> None:
    recipe = PAGE.split("## One PostgreSQL, one Redis, one Chroma server")[1].split("## ")[0]
    compose = (REPO / "deploy" / "compose.yaml").read_text(encoding="utf-8")
    assert "--protected-mode no" not in recipe + compose
    assert "requirepass" in recipe and "requirepass" in compose
    assert "chroma run" not in recipe.split("```")[1]  # its server takes no credentials
    for text in (recipe, compose):
        assert "CHROMA_SERVER_AUTHN_PROVIDER" in text
        assert "TokenAuthenticationServerProvider" in text
    assert "image: chromadb/chroma" not in compose
    instances = PAGE.split("## N instances on M machines")[1].split("```")[1]
    assert "redis://:REDIS_PASSWORD@" in instances and "CHROMA_TOKEN=" in instances
    assert "REDIS_PASSWORD}@redis" in compose and "CHROMA_TOKEN:" in compose


SECRETS = ("POSTGRES_PASSWORD", "REDIS_PASSWORD", "CHROMA_TOKEN", "DEEP_RESEARCH_SERVER_TOKEN")


def test_the_compose_file_requires_every_secret_and_puts_none_on_a_command_line() -> None:
    text = (REPO / "deploy" / "compose.yaml").read_text(encoding="utf-8")
    services = yaml.safe_load(text)["services"]  # what `docker compose` parses
    for name in SECRETS:
        assert f"${{{name}:?" in text, f"{name} is not required"
        assert not re.search(rf"\$\{{{name}:?-", text), f"{name} has a default"
    for service in services.values():
        for key in ("command", "entrypoint"):
            value = service.get(key) or ""
            line = " ".join(value) if isinstance(value, list) else value
            # `$$NAME` is the container's shell reading its environment, not compose's value
            assert "--requirepass" not in line
            for name in SECRETS:
                assert not re.search(rf"(?<!\$)\$\{{?{name}", line), line
