"""The state's reducers: sources merged by page, lists extended or reset."""

from __future__ import annotations

from deep_research.state import Source, extend_or_reset, merge_sources


def page(url: str, content: str) -> Source:
    return Source(url=url, title="t", content=content, found_by="q")


def test_a_page_retrieved_twice_is_one_record_under_its_first_url() -> None:
    first = page("https://a.example/x", "one")
    merged = merge_sources([first], [page("HTTPS://A.example/x/#top", "one")])
    assert merged == [first]


def test_new_paragraphs_of_a_page_seen_again_are_added_once() -> None:
    merged = merge_sources(
        [page("https://a.example/x", "one\n\ntwo")],
        [page("https://a.example/x", "two\n\nthree\n\n  "), page("https://a.example/x", "three")],
    )
    assert [s["content"] for s in merged] == ["one\n\ntwo\n\nthree"]


def test_pages_stay_in_order_of_first_retrieval() -> None:
    a, b, c = (page(f"https://{n}.example/", n) for n in "abc")
    assert [s["url"] for s in merge_sources([a, b], [c, a])] == [a["url"], b["url"], c["url"]]


def test_merging_leaves_the_current_list_untouched() -> None:
    current = [page("https://a.example/", "one")]
    merge_sources(current, [page("https://a.example/", "two")])
    assert current == [page("https://a.example/", "one")]


def test_extend_appends_and_none_starts_afresh() -> None:
    assert extend_or_reset([1], [2, 3]) == [1, 2, 3]
    assert extend_or_reset([1, 2], None) == []
    assert extend_or_reset([1], []) == [1]


def test_a_url_urlsplit_refuses_is_a_source_of_its_own_not_a_crash() -> None:
    # A search result may carry an unclosed IPv6 bracket; the reducer must not raise on it.
    merged = merge_sources([page("https://[::1/x", "a")], [page("https://[::1]/x", "b")])
    assert [s["url"] for s in merged] == ["https://[::1/x", "https://[::1]/x"]


def test_the_tool_name_constants_are_the_vocabulary_and_name_the_orchestrators_tools() -> None:
    from typing import get_args

    from langchain_core.utils.function_calling import convert_to_openai_tool

    from deep_research.config.settings import Context
    from deep_research.nodes import planning
    from deep_research.state import RESEARCH, WRITE_TODOS, ToolName

    assert {RESEARCH, WRITE_TODOS} == set(get_args(ToolName))
    names = [convert_to_openai_tool(tool)["function"]["name"] for tool in planning.tools(Context())]
    assert sorted(names) == sorted(get_args(ToolName)) == sorted(planning.EXAMPLES)


def test_a_web_pdf_s_pages_are_records_of_their_own_but_an_html_page_s_page_anchor_is_not() -> None:
    pdf = "https://a.example/r.pdf"
    pages = [
        Source(url=f"{pdf}#page={n}", title="R", content=f"p{n}", found_by="t", pdf_page=n)
        for n in (2, 3)
    ]
    html = [
        Source(url="https://a.example/p#page=2", title="P", content="one", found_by="t"),
        Source(url="https://a.example/p", title="P", content="two", found_by="t"),
    ]
    merged = merge_sources([], [*pages, *html])
    assert [s["url"] for s in merged] == [f"{pdf}#page=2", f"{pdf}#page=3", html[0]["url"]]
    assert merged[2]["content"] == "one\n\ntwo"
