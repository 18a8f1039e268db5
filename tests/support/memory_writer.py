"""Run as a separate process: open the environment's memory, write notes, or hold it.

`python -m tests.support.memory_writer hold` opens the store, prints "ready" and keeps it
(and its directory lock) until stdin closes; `... write PREFIX N` writes N notes and
prints "done".
"""

from __future__ import annotations

import asyncio
import sys

from deep_research.memory import LIBRARY_COLLECTION, open_store


def note(prefix: str, i: int) -> str:
    return f"{prefix} note {i}: the spawning river of salmon population number {i}"


async def main(argv: list[str]) -> None:
    store = await open_store()
    if argv[0] == "hold":
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.read)
        return
    prefix, count = argv[1], int(argv[2])
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)  # start writing when the test says so
    await asyncio.gather(
        *(store.add(LIBRARY_COLLECTION, f"{prefix}{i}", note(prefix, i), {}) for i in range(count))
    )
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
