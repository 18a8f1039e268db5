"""Size bounds: the visible cut, fair shares, and shortening a request the server refused."""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from deep_research.text.limits import MIN_CUT_CHARS, cut, fair_cut, fair_share, shorten

NOTE = re.compile(r"… \[cut: ([\d,]+) more characters\]$")


def removed(text: str) -> int:
    match = NOTE.search(text)
    assert match, text[-80:]
    return int(match.group(1).replace(",", ""))


def test_text_within_the_limit_is_kept_whole() -> None:
    assert cut("short answer", 12) == "short answer"


def test_a_cut_fits_the_limit_and_says_exactly_how_much_went() -> None:
    text = "word " * 2_000_000  # 10,000,000 characters
    short = cut(text, 4_000)
    assert len(short) <= 4_000
    kept = short[: NOTE.search(short).start()].rstrip("\n")  # type: ignore[union-attr]
    assert text.startswith(kept) and kept.endswith("word"), "cut at a word break"
    assert removed(short) == len(text) - len(kept)
    assert "9,996," in short, "the count is readable"


def test_a_limit_smaller_than_the_note_still_holds() -> None:
    assert cut("x" * 100, 10) == "x" * 10


def test_fair_cut_keeps_short_texts_whole_and_cuts_the_long_ones_equally() -> None:
    texts = ["a" * 100, "b" * 50_000, "c" * 80_000, "d" * 300]
    out = fair_cut(texts, 20_000)
    assert out[0] == texts[0] and out[3] == texts[3]
    assert sum(map(len, out)) <= 20_000
    assert len(out[1]) == len(out[2]) > 9_000, "the long ones share what is left"
    assert all(o[:50] == t[:50] for o, t in zip(out, texts, strict=True)), "none dropped"


def test_fair_share_is_the_longest_text_when_everything_fits() -> None:
    assert fair_share([10, 30, 20], 1_000) == 30
    assert fair_share([], 1_000) == 0


def history() -> list[AIMessage | HumanMessage | SystemMessage | ToolMessage]:
    return [
        SystemMessage("You lead a research team. " * 100),
        HumanMessage("How do heat pumps work in the cold?"),
        AIMessage("", tool_calls=[{"name": "research", "args": {"topic": "t"}, "id": "r1"}]),
        ToolMessage("finding " * 5_000, tool_call_id="r1"),
        HumanMessage("answer " * 1_000),
        HumanMessage("Write the report now."),
    ]


def total(messages: list) -> int:  # type: ignore[type-arg]
    return sum(len(m.content) for m in messages)


def test_shorten_halves_the_longest_contents_and_keeps_system_prompt_and_short_messages() -> None:
    messages = history()
    shorter = shorten(messages)
    assert shorter is not None and len(shorter) == len(messages)
    assert shorter[0] == messages[0], "the system prompt is never cut"
    assert shorter[1] == messages[1] and shorter[5] == messages[5], "short messages stay whole"
    assert shorter[2] == messages[2], "tool calls keep their answers"
    cut_part = len(messages[3].content) + len(messages[4].content)
    assert len(shorter[3].content) + len(shorter[4].content) <= cut_part // 2
    assert removed(str(shorter[3].content)) > 0 and shorter[3].tool_call_id == "r1"


def test_every_round_of_shorten_is_strictly_shorter_until_nothing_can_be_cut() -> None:
    messages = history()
    sizes = [total(messages)]
    while (shorter := shorten(messages)) is not None:
        messages = shorter
        sizes.append(total(messages))
    assert sizes == sorted(set(sizes), reverse=True), "strictly shorter every time"
    assert len(sizes) > 3
    assert all(len(m.content) <= MIN_CUT_CHARS for m in messages[1:])


def test_a_long_last_message_is_cut_when_it_is_the_only_long_one() -> None:
    messages = [SystemMessage("Write the report."), HumanMessage("Research result: x " * 10_000)]
    shorter = shorten(messages)
    assert shorter is not None and len(shorter[1].content) <= len(messages[1].content) // 2


def test_nothing_to_shorten_gives_none() -> None:
    assert shorten([SystemMessage("s" * 10_000), HumanMessage("short")]) is None


def test_a_cut_inside_a_data_fence_closes_the_fence_and_stays_within_the_limit() -> None:
    fenced = (
        "Intro.\n<<<data 0a1b2c3d4e5f>>>\n" + "web words " * 500 + "\n<<<end data 0a1b2c3d4e5f>>>"
    )
    short = cut(fenced, 400)
    assert len(short) <= 400
    assert short.count("<<<data 0a1b2c3d4e5f>>>") == 1
    body, closer = short.split("<<<data 0a1b2c3d4e5f>>>")[1].split("\n<<<end data 0a1b2c3d4e5f>>>")
    assert "web words" in body and "cut:" in closer


def test_shortening_a_request_keeps_every_fence_closed() -> None:
    nonce = "00ff00ff00ff"
    text = f"<<<data {nonce}>>>\n" + "page text " * 3000 + f"\n<<<end data {nonce}>>>"
    shorter = shorten([SystemMessage("rules"), HumanMessage(text), HumanMessage("go")])
    assert shorter is not None
    content = str(shorter[1].content)
    assert len(content) < len(text) and f"<<<end data {nonce}>>>" in content
