"""The researcher's floor: a topic is searched even when the model makes no search call.

A researcher whose turn brings no usable `web_search` call before it has searched at all
(plain text, an unusable call, an empty query) gets one added in code: its topic, as one
query. The search then runs like any other (its share, the run's cap, relevance, pages
read), and the next turn writes the findings from what was read. A model that searches
never meets the floor; one that has searched may stop when it likes.
"""

from __future__ import annotations

import uuid

from langchain_core.messages import AIMessage, ToolCall, ToolMessage

from deep_research.state import ResearcherState

QUERY_CHARS = 200  # a search API's query is a line, not a paragraph


def due(state: ResearcherState, reply: AIMessage, usable_queries: int) -> bool:
    """Whether the researcher's `reply` gets the floor's search: no search step has run on
    the topic yet, none is asked for now, and its share still has a search in it."""
    searched = any(isinstance(m, ToolMessage) for m in state["messages"])
    share_left = state["share"]["searches"] - state.get("searches", 0)
    return not searched and usable_queries == 0 and share_left > 0


def query_of(topic: str) -> str:
    """The topic as one query: one line, cut at a word."""
    text = " ".join(topic.split())
    return text if len(text) <= QUERY_CHARS else text[:QUERY_CHARS].rsplit(" ", 1)[0]


def search_reply(reply: AIMessage, tool: str, topic: str) -> AIMessage:
    """`reply` with one `tool` call searching the topic added; its own calls stay, to be
    answered (with an error and an example where unusable) as always."""
    call = ToolCall(
        name=tool, args={"queries": [query_of(topic)]}, id=f"floor-{uuid.uuid4().hex[:12]}"
    )
    return reply.model_copy(update={"tool_calls": [*reply.tool_calls, call]})
