"""What the search cap's graph tests share: the question, and three researchers' topics."""

from __future__ import annotations

Q = {"messages": [{"role": "user", "content": "q"}]}
THREE = ("alpha", "beta", "gamma")
