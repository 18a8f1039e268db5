"""What the reader asked of the report: its language (the question's, or `report_language`),
and the wishes the writer is told (language, length, the reader's own form)."""

from __future__ import annotations

from deep_research.config.report_lengths import LENGTHS, length_range
from deep_research.config.settings import Context
from deep_research.runtime import prompts
from deep_research.state import ResearchState
from deep_research.text import language

UNKNOWN = "the language the user's question is written in"


def report_language(state: ResearchState, context: Context) -> str:
    """A `language.LANGUAGES` code, a language's name from the setting, or "" (unclear)."""
    chosen = language.setting_language(context.report_language)
    return chosen or language.detect(state.get("question", ""))


def wishes(state: ResearchState, context: Context) -> str:
    """The reader's wishes as the report's writer reads them, after its own rules."""
    length = context.report_length
    return prompts.render(
        "report_form",
        language=language_wish(state, context),
        length=length,
        length_range=length_range(length),
        layout=LENGTHS[length].form,
    )


def language_wish(state: ResearchState, context: Context) -> str:
    """The report's language as its writers are told it: by name, and why."""
    chosen = report_language(state, context)
    if not chosen:
        return UNKNOWN
    if language.setting_language(context.report_language):
        return f"{language.language_name(chosen)} (the reader's setting)"
    return f"{language.language_name(chosen)}, the language of the user's question"


def clarifier_form(context: Context) -> str:
    """What the clarifier is told of the report's form: ask about it only when the request
    leaves it open and no setting fixed the length, and only beside questions it asks anyway
    (a form left open never costs the reader a round of questions by itself)."""
    if "report_length" in context.model_fields_set:
        return (
            f"the reader's settings fix it ({context.report_length}, "
            f"{length_range(context.report_length)}): never ask about it."
        )
    return prompts.render("clarifier_form")
