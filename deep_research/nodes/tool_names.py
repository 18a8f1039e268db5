"""The orchestrator's tool names, one definition each: its tool schemas (`planning.py`)
take their titles from here, and every comparison with a call's name uses these constants."""

from __future__ import annotations

from typing import Final, Literal

ToolName = Literal["research", "write_todos"]
RESEARCH: Final = "research"
WRITE_TODOS: Final = "write_todos"
