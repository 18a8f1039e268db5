"""The report written as sections in parallel (`report_in_sections`): when it applies, and
the calls that write it.

Once every item of the plan is researched (or at the turn cap), the report's one long call
is the last step of the critical path. Split, each researched topic gets a call of its own
that reads only its researcher's findings, and one more call writes the title, the opening
and the conclusion from short digests; they run at once and are stitched into one report
(`report_stitch`), which `finalize` checks as it checks any. Where the split cannot keep
what the reader asked for, one call writes the report as before: a single topic, a cost
budget (the single call shrinks its findings to fit, `report_writer`), or, under `auto`, a
request for a table or a comparison across the topics, or researchers run one at a time.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from deep_research import memory
from deep_research.config.settings import Context
from deep_research.llm import models, slots, spending
from deep_research.nodes import report_form, report_stitch, todo_list
from deep_research.nodes.report_stitch import Part
from deep_research.state import RESEARCH, ResearchState
from deep_research.text import fences, limits

# A request that asks for these wants the topics side by side, which sections would break.
ACROSS = re.compile(
    r"\b(tables?|tabular|compar\w*|versus|vs\.?|side[- ]by[- ]side|rank\w*|tabell\w*|"
    r"tableau\w*|tabla\w*|vergleich\w*|confront\w*)\b|表|比较|比較|비교",
    re.IGNORECASE,
)
# The most sections one report is split into; more topics are written by the single call.
MAX_SECTIONS = 12


def parts(state: ResearchState) -> list[Part]:
    """This question's research results (after its last user message), each with its topic,
    in the order they came back; failed research has none."""
    messages = state.get("messages") or []
    humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    start = humans[-1] + 1 if humans else 0
    topics: dict[str, str] = {}
    found: list[Part] = []
    for message in messages[start:]:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call["name"] == RESEARCH and isinstance(call["args"].get("topic"), str):
                    topics[call.get("id") or ""] = call["args"]["topic"]
        elif (
            isinstance(message, ToolMessage)
            and message.name == RESEARCH
            and message.status != "error"
            and message.tool_call_id in topics
        ):
            found.append(Part(topics[message.tool_call_id], fences.unfence(message.text)))
    return found


def _followed_up(state: ResearchState) -> bool:
    """Whether research came back before this question (a follow-up on a finished thread):
    its report builds on the earlier findings too, which only the single call reads."""
    messages = state.get("messages") or []
    humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    earlier = messages[: humans[-1]] if humans else []
    return any(isinstance(m, ToolMessage) and m.name == RESEARCH for m in earlier)


def request(state: ResearchState) -> str:
    """The reader's request: the question and the user's answers to the clarifier (not the
    plan review's notes to the orchestrator, which are user messages too)."""
    messages = state.get("messages") or []
    question = state.get("question", "")
    asked = [
        i for i, m in enumerate(messages) if isinstance(m, HumanMessage) and m.text == question
    ]
    start = asked[-1] if asked else 0
    answers = [
        answer.text
        for before, answer in zip(messages[start:], messages[start + 1 :], strict=False)
        if isinstance(before, AIMessage)
        and before.name == "clarifier"
        and isinstance(answer, HumanMessage)
    ]
    return report_stitch.request_of(question, "\n\n".join(answers))


def due(state: ResearchState, context: Context, report_turn: bool) -> list[Part]:
    """The parts to write as sections now, or [] when this turn does not split the report:
    the setting is off, no plan is all researched (and it is not the turn cap), a budget is
    set, fewer than two topics came back, or (`auto`) the request asks across topics or
    researchers run one at a time (a one-slot server, where the parts would only queue)."""
    if context.report_in_sections == "off" or context.max_cost_usd is not None:
        return []
    if state.get("budget_note") or _followed_up(state):
        return []
    todos = state.get("todos") or []
    planned = bool(todos) and all(t["status"] == "completed" for t in todos)
    if not report_turn and not (planned and todo_list.researched_topics(state)):
        return []
    found = parts(state)
    if not 2 <= len(found) <= MAX_SECTIONS:
        return []
    if context.report_in_sections == "auto" and (
        _one_at_a_time(context) or ACROSS.search(request(state))
    ):
        return []
    return found


def _one_at_a_time(context: Context) -> bool:
    """Whether the report's parts would queue at the server: researchers run one at a time,
    or the server answers one request at a time (`one_slot_server`, llm/slots.py)."""
    if context.max_researchers_per_turn == 1 or context.one_slot_server == "on":
        return True
    if context.one_slot_server == "off":
        return False
    return slots.serves_one_at_a_time(models.role_model(context, "orchestrator").endpoint)


async def write(
    state: ResearchState,
    context: Context,
    model: models.RoleModel,
    ledger: spending.Ledger,
    found: list[Part],
) -> AIMessage:
    """The sections and the frame, asked at once and in a fixed order (each a durable task),
    stitched. A call that fails raises its error once every call has ended."""
    language = report_form.language_wish(state, context)
    asked = request(state)
    per_section, per_frame = report_stitch.words(context.report_length, len(found))
    # Each topic's findings cut to the share the single call would have given them.
    budget = limits.FINDINGS_CHARS - len(asked) - len(found) * (fences.FENCE_CHARS + 64)
    texts = limits.fair_cut([part.findings for part in found], max(len(found), budget))

    async def written(messages: list[BaseMessage], placed: Callable[[AIMessage], str]) -> AIMessage:
        reply = await model.ask(messages, ledger=ledger)
        # Embedded for memory now, as the report will hold it, while the others are written,
        # and the question (the stored report's first piece: computed with the first part
        # written, then found in the model's cache).
        memory.prepare_part(placed(reply), context, question=state.get("question", ""))
        return reply

    calls = [
        written(
            report_stitch.section_messages(part, text, asked, language, per_section),
            functools.partial(report_stitch.section_text, topic=part.topic),
        )
        for part, text in zip(found, texts, strict=True)
    ]
    frame = report_stitch.frame_messages(found, asked, language, per_frame)
    calls.append(written(frame, functools.partial(report_stitch.frame_text, title=asked)))
    replies = await asyncio.gather(*calls, return_exceptions=True)
    for reply in replies:
        if isinstance(reply, BaseException):
            raise reply
    answers = [reply for reply in replies if isinstance(reply, AIMessage)]
    topics = [part.topic for part in found]
    return report_stitch.stitched(answers[-1], answers[:-1], topics, asked)
