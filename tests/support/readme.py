"""Reading README.md's code blocks, and running its Python snippets as a reader would."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def block_after(marker: str, text: str = README) -> str:
    """The body of the first fenced block after `marker`."""
    start = text.index(marker)
    match = FENCE.search(text, start)
    assert match, f"no code block after {marker!r}"
    return match.group(2)


def section(heading: str) -> str:
    """README text from `heading` to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = README.index(f"\n{heading}\n")
    ends = [README.find(f"\n{'#' * n} ", start + 1) for n in range(1, len(level) + 1)]
    ends = [end for end in ends if end != -1]
    return README[start : min(ends) if ends else len(README)]


def run_with_top_level_await(source: str) -> Any:
    """Compile `source` as Jupyter and `python -m asyncio` do: `await` allowed at the top."""
    return eval(  # noqa: S307  # the README's own snippet
        compile(source, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), {}
    )
