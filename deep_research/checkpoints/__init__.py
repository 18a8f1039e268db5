"""Where runs are kept: the local SQLite file, or PostgreSQL shared by every directory.

`DEEP_RESEARCH_CHECKPOINTS=postgresql://user:password@host:port/db` moves the checkpoints
and the run list there ([Checkpoints](docs/checkpoints.md)); unset, they stay in
`.deep_research/`. `target` reads and checks the variable, `savers` opens the checkpointer,
`postgres` holds the connection and the shared run list.
"""

from deep_research.checkpoints.savers import open_checkpointer
from deep_research.checkpoints.target import (
    VARIABLE,
    CheckpointsConfigError,
    Target,
    target_from,
)

__all__ = ["VARIABLE", "CheckpointsConfigError", "Target", "open_checkpointer", "target_from"]
