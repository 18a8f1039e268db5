"""The issue's own case: `langgraph dev` serving, as the MCP docs say to keep it, and the
user's CLI beside it on the same memory. The CLI adds a document and researches; the
server's runs and the CLI's recall each other's reports, and the server's researchers read
the CLI's document. Before sharing, the server held the memory's lock: `library add` was
refused and the CLI ran without memory."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from tests.support.brain import LINK, ResearchBrain, _texts
from tests.support.cli import cli_env, default_memory, run_cli
from tests.support.fakes.openai_server import Reply
from tests.support.langgraph_dev import ASSISTANT, dev_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUESTION = "How well do heat pumps work in cold climates?"
MARKER = "ZEBRA-7731"  # only the user's document says it
RUN_TIMEOUT = 180.0
NO_CLARIFY = {"allow_clarification": False, "fetch_top_n": 0}
STARTED = re.compile(r"Thread (\w+) · resume with")


@dataclass
class ReadingBrain(ResearchBrain):
    """A ResearchBrain that keeps every tool result its researchers were shown."""

    shown: list[str] = field(default_factory=list)

    async def _research(self, body: dict[str, Any]) -> Reply:
        self.shown += _texts(body, "tool")
        return await super()._research(body)


async def test_the_cli_and_a_running_langgraph_dev_share_memory_and_library(
    tmp_path: Path,
) -> None:
    brain = ReadingBrain()
    document = tmp_path / "cold.md"
    document.write_text(
        "# Heat pumps in cold climates\n\nHeat pumps in cold climates keep heating at minus "
        f"twenty degrees, installers in Norway report ({MARKER}).\n"
    )
    (cli_dir := tmp_path / "cli").mkdir()
    with dev_server(tmp_path, brain, {"USE_MEMORY": "true"}) as server:
        client = get_client(url=server.url, api_key=None, timeout=RUN_TIMEOUT)

        async def research() -> tuple[str, dict[str, Any]]:
            thread_id = (await client.threads.create())["thread_id"]
            user = {"role": "user", "content": QUESTION}
            await client.runs.wait(
                thread_id,
                ASSISTANT,
                input={"messages": [user]},
                context=NO_CLARIFY,
                raise_error=True,
            )
            state = await client.threads.get_state(thread_id)
            return thread_id, state["values"]

        server_thread, first = await research()
        assert LINK.findall(first["final_report"])
        home = tmp_path / "home"  # the server's HOME: the CLI is the same user
        env = {**cli_env(server.model, server.tavily, home), "USE_MEMORY": "true"}
        env["FETCH_TOP_N"] = "0"
        added = run_cli(cli_dir, env, "library", "add", str(document))
        assert added.returncode == 0, added.stdout + added.stderr
        assert "Done: 1 added" in added.stdout
        cli_run = run_cli(cli_dir, env, "--no-clarify", QUESTION)
        assert cli_run.returncode == 0, cli_run.stderr
        [cli_thread] = STARTED.findall(cli_run.stdout)
        brain.shown.clear()
        _, second = await research()
    memory = default_memory(home)
    # The CLI recalled the server's report, through the same memory the server holds.
    recalled = next(line for line in cli_run.stdout.splitlines() if "You researched" in line)
    assert f"thread {server_thread}" in recalled, recalled
    memory_line = next(line for line in cli_run.stdout.splitlines() if line.startswith("memory"))
    assert "unavailable" not in memory_line and f"at {memory}," in memory_line, memory_line
    # The server's next run recalled the CLI's report and read the CLI's document.
    assert [r["thread_id"] for r in second["earlier_reports"]][:1] == [cli_thread]
    assert any(MARKER in text for text in brain.shown), brain.shown
    assert "in use by another process" not in server.log.read_text()
