"""The `langgraph dev` server the e2e modules share: one per module, as each module asks."""

from tests.support.langgraph_dev import module_server as server

__all__ = ["server"]
