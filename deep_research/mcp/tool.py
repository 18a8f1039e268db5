"""The `deep_research` tool as a calling model sees it: description, arguments, checks.

Its arguments are checked strictly (`StrictTool`): an argument it does not know is refused,
not dropped (`searchProvider: "library"` would otherwise research the web), and no value
is coerced (`max_searches: true` is not 1, `clarify: "no"` is not false).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Annotated, Any

from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import ConfigDict, Field, ValidationError

from deep_research.config.names import SearchChoice
from deep_research.config.report_lengths import ReportLength, length_range
from deep_research.errors import DeepResearchError, ReadableError
from deep_research.export import check_available
from deep_research.mcp import run
from deep_research.mcp.attachment import ReportFormat, with_file
from deep_research.mcp.outcome import with_cost, with_outcome
from deep_research.text import limits
from deep_research.text.language import setting_language

THREAD_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"  # an Agent Server thread id (a UUID)

DESCRIPTION = """\
Research a question on the web and return a long Markdown report with inline citations.

Several researchers search and read web pages in parallel; a code check keeps only links \
to pages they really retrieved, and the report ends with its list of sources. It is \
written in the question's language (or `language`), at the `length` asked for. A call \
takes minutes (often 3-10 with a local model), not seconds: use it for questions that \
need several sources, not for quick facts. Progress is reported while it runs.

Put everything that narrows the question into `question` (place, period, audience, what \
the answer is for): no clarifying questions are asked during the call. To ask the user \
first, call with `clarify: true`: you get back 2-3 questions to put to the user (and no \
research is done); then call again with the question and their answers written into \
`question`. With `format` html, pdf or docx the report also comes as a file (an embedded \
resource), its citations still links.

Each report ends with its `thread`. To ask more about that research (a follow-up), call \
again with the new question and that `thread`: it starts from the pages already read, \
and searches only for what they do not answer, within the first call's search cap.\
"""


LanguageArgument = Annotated[
    str | None,
    Field(
        max_length=40,
        description="The report's language, as a code (de, zh, ...) or a name (German, "
        "Swahili). Leave unset for the language the question is written in.",
    ),
]
LengthArgument = Annotated[
    ReportLength | None,
    Field(
        description=f"brief ({length_range('brief')}), standard ({length_range('standard')}) "
        f"or detailed ({length_range('detailed')}). Leave unset for the server's "
        "report_length; a form the question asks for (a table, given sections) is followed "
        "either way.",
    ),
]

ThreadArgument = Annotated[
    str | None,
    Field(
        pattern=THREAD_PATTERN,
        description="The `thread` a previous call's report ended with: `question` is then "
        "a follow-up on that finished research. Leave unset for a new research.",
    ),
]


async def deep_research(
    question: Annotated[
        str,
        Field(
            description="The research question in plain words, with any context that "
            f"matters. At most {limits.USER_TEXT_CHARS:,} characters.",
        ),
    ],
    ctx: ToolContext,
    clarify: Annotated[
        bool,
        Field(
            description="true: do not research; return the clarifying questions to ask "
            "the user first (or say that none are needed).",
        ),
    ] = False,
    max_searches: Annotated[
        int | None,
        Field(
            ge=1,
            le=100,
            description="Most web searches this research may send (default: the server's "
            "max_searches_per_run, 25 unless configured). "
            "Fewer is faster and shallower.",
        ),
    ] = None,
    search_provider: Annotated[
        SearchChoice | None,
        Field(
            description="Search backend; `library`: only the documents added to the "
            "server's library, never the web. Leave unset for the server's choice."
        ),
    ] = None,
    format: Annotated[
        ReportFormat,
        Field(
            description="markdown: the report as text only. html, pdf or docx: the text, "
            "and the report as that file (an embedded resource; pdf and docx in base64)."
        ),
    ] = "markdown",
    language: LanguageArgument = None,
    length: LengthArgument = None,
    thread: ThreadArgument = None,
) -> str | list[Any]:
    """The tool: research `question` and return the report (or, with `clarify`, questions);
    with `thread`, a follow-up on that research."""
    text = checked_question(question)
    if thread is not None and clarify:
        raise ToolError(
            "`clarify` asks before a new research; a follow-up on `thread` is researched at "
            "once: put what narrows it into `question` and leave `clarify` false."
        )
    context = run_context(
        clarify=clarify,
        max_searches=max_searches,
        provider=search_provider,
        language=checked_language(language),
        length=length,
    )
    try:
        if format != "markdown":
            # Before minutes of research, not after; off the loop: importing WeasyPrint
            # reads files, which langgraph dev's blocking check refuses on the loop.
            await asyncio.to_thread(check_available, format)
        answer = await run.research(
            text, context, clarify=clarify, progress=ctx.report_progress, thread=thread
        )
        if clarify:
            return answer.text
    except (run.RunFailed, ReadableError) as failure:
        raise ToolError(str(failure)) from None
    # The warning leads the text and the file alike: a file saved from the result and
    # opened later says what it lacks in its own first lines.
    answer = replace(answer, text=with_outcome(answer.text, answer.values))
    try:
        result = await with_file(answer, format, text)
    except DeepResearchError as failure:  # the research is done: its text is not lost
        result = f"{answer.text}\n\n(The {format} file could not be made: {failure})"
    return with_cost(result, answer.values, answer.thread_id)


def checked_question(question: str) -> str:
    """The question stripped, or a tool error saying what to change."""
    text = question.strip()
    if not text:
        raise ToolError("`question` is empty: pass the research question as text.")
    if len(text) > limits.USER_TEXT_CHARS:
        raise ToolError(
            f"`question` is {len(text):,} characters; the limit is "
            f"{limits.USER_TEXT_CHARS:,}. Shorten it to the question and the context that "
            "matters (leave out pasted documents)."
        )
    return text


def checked_language(language: str | None) -> str | None:
    """The `language` argument as `report_language` takes it, or a tool error saying why not."""
    if language is None:
        return None
    try:
        setting_language(language)
    except ValueError as refused:
        raise ToolError(f"`language`: {refused}.") from None
    return language


def run_context(
    *,
    clarify: bool,
    max_searches: int | None,
    provider: str | None,
    language: str | None = None,
    length: str | None = None,
) -> dict[str, Any]:
    """The run's `Context`: nobody can answer a question mid-call, so only `clarify` asks one,
    and the plan is never held for review (even with REVIEW_PLAN=true on the server)."""
    context: dict[str, Any] = {"allow_clarification": clarify, "review_plan": False}
    if language is not None:
        context["report_language"] = language
    if length is not None:
        context["report_length"] = length
    if max_searches is not None:
        context["max_searches_per_run"] = max_searches
    if provider is not None:
        context["search_provider"] = provider
    return context


JSON_KINDS = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "an array",
    dict: "an object",
    type(None): "null",
}
EXAMPLE = '{"question": "How well do heat pumps work in cold climates?", "max_searches": 10}'


class StrictTool(Tool):
    """An MCP tool whose arguments are checked strictly, and refused in plain words."""

    @classmethod
    def strict(cls, tool: Tool) -> StrictTool:
        """`tool` with an argument model that forbids unknown keys and coerces nothing."""
        loose = tool.fn_metadata.arg_model
        model: type[ArgModelBase] = type(
            loose.__name__,
            (loose,),
            {"model_config": ConfigDict(**loose.model_config, extra="forbid", strict=True)},
        )
        tool.fn_metadata.arg_model = model
        # The schema a client reads then says so too: `additionalProperties: false`.
        parameters = model.model_json_schema(by_alias=True)
        return cls.model_validate({**dict(tool), "parameters": parameters})

    async def run(
        self, arguments: dict[str, Any], context: Any, convert_result: bool = False
    ) -> Any:
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as error:
            raise ToolError(refusal(error, self.parameters)) from error
        return await super().run(arguments, context, convert_result)


def refusal(error: ValidationError, schema: dict[str, Any]) -> str:
    """Every refused argument named, what it must be, and a call that works."""
    problems = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "extra_forbidden":
            problems.append(f"unknown argument `{name}`")
        elif item["type"] == "missing":
            problems.append(f"`{name}` is missing")
        else:
            kind = JSON_KINDS.get(type(item["input"]), "another kind of value")
            problems.append(f"`{name}`: {item['msg'].lower()} (got {kind})")
    known = ", ".join(f"`{name}`" for name in schema.get("properties", {}))
    return (
        f"Arguments refused: {'; '.join(problems)}. The arguments are {known}. "
        f"For example: {EXAMPLE}"
    )
