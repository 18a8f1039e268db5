"""The `langgraph dev` server a hostile module may ask for: one per module."""

from tests.support.langgraph_dev import module_server as server

__all__ = ["server"]
