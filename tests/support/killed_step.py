"""A process whose step kills itself mid-request: tests/integration/test_durability_modes.py.

`python tests/support/killed_step.py DATABASE LOG DURABILITY kill|resume`: the step sends two
calls as durable tasks (runtime/durable.py), logging each send to LOG; with `kill` the second
SIGKILLs the process half a second into its request, as a stop would land.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import START, StateGraph

from deep_research.checkpoints import open_checkpointer
from deep_research.runtime import durable


class State(TypedDict):
    done: list[str]


def build(log: Path, kill: bool) -> StateGraph[Any]:
    async def step(state: State) -> dict[str, Any]:
        answers = []
        for name in ("first", "second"):

            async def send(name: str = name) -> str:
                with log.open("a") as out:
                    out.write(name + "\n")
                if name == "second":
                    await asyncio.sleep(0.5)  # the request is under way
                    if kill:
                        os.kill(os.getpid(), signal.SIGKILL)
                return f"answer to {name}"

            answers.append(await durable.call("ask", durable.digest(name), send))
        return {"done": answers}

    builder = StateGraph(State)
    builder.add_node(step)
    builder.add_edge(START, "step")
    return builder


async def main(database: str, log: str, durability: str, kill: bool) -> None:
    async with open_checkpointer(sqlite=database) as saver:
        graph = build(Path(log), kill).compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t"}}
        first = {"done": []} if kill else None
        out = await graph.ainvoke(first, config, durability=durability)
        print(out["done"])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "kill"))
