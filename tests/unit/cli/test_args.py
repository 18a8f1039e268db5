"""`cli.args`: the research parser, its one-line errors, and flags as `Context` overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.cli.args import (
    REPORTS_DIR,
    ReportTarget,
    UsageError,
    readable,
    report_target,
    research_parser,
    settings_from,
)
from deep_research.config.names import MODEL_PROVIDERS, SEARCH_CHOICES, SETTING_NAMES
from deep_research.errors import DeepResearchError

ROLES = ("clarifier_model", "orchestrator_model", "researcher_model")


def test_no_flag_is_no_override() -> None:
    args = research_parser().parse_args(["why?"])
    assert args.question == "why?" and settings_from(args) == {}


def test_each_flag_becomes_its_field() -> None:
    argv = ["--no-clarify", "--review-plan", "--model", "openai:gpt", "--search", "ddgs"]
    args = research_parser().parse_args([*argv, "--max-searches", "0", "q"])
    assert settings_from(args) == {
        "allow_clarification": False,
        "review_plan": True,
        **dict.fromkeys(ROLES, "openai:gpt"),
        "search_provider": "ddgs",
        "max_searches_per_run": 0,
    }


def test_set_strips_field_and_value_and_a_later_flag_wins() -> None:
    args = research_parser().parse_args(
        ["--set", " fetch_top_n = 2 ", "--set", "search_provider=tavily", "--search", "ddgs", "q"]
    )
    assert settings_from(args) == {"fetch_top_n": "2", "search_provider": "ddgs"}


@pytest.mark.parametrize("item", ["nonsense", "=3", " =3"])
def test_set_without_a_field_is_a_usage_error(item: str) -> None:
    args = research_parser().parse_args(["--set", item, "q"])
    with pytest.raises(UsageError, match="--set wants FIELD=VALUE"):
        settings_from(args)


def test_a_parse_error_is_one_usage_error_line_pointing_at_help() -> None:
    with pytest.raises(
        UsageError, match=r"invalid int value: 'many' \(see deep-research --help\)$"
    ):
        research_parser().parse_args(["--max-searches", "many"])
    assert issubclass(UsageError, DeepResearchError) and issubclass(UsageError, ValueError)


def test_a_bad_thread_id_is_refused_by_the_parser() -> None:
    with pytest.raises(UsageError, match="--resume"):
        research_parser().parse_args(["--resume", "../etc"])
    assert research_parser().parse_args(["--resume", "abc12345"]).resume == "abc12345"


def test_help_lists_every_setting_provider_and_search_choice() -> None:
    text = " ".join(research_parser().format_help().split())
    for name in [*SETTING_NAMES, *MODEL_PROVIDERS, *SEARCH_CHOICES]:
        assert name in text, name


def test_readable_turns_undecodable_bytes_into_replacement_characters() -> None:
    argument = b"caf\xe9 ok".decode("utf-8", "surrogateescape")
    assert readable(argument) == "caf\ufffd ok"
    assert readable("café") == "café"


def test_max_cost_sets_the_budget_in_usd() -> None:
    args = research_parser().parse_args(["--max-cost", "0.25", "q"])
    assert settings_from(args) == {"max_cost_usd": 0.25}
    with pytest.raises(UsageError, match="invalid float value: 'lots'"):
        research_parser().parse_args(["--max-cost", "lots"])


def test_without_out_the_report_goes_to_reports_under_its_usual_name() -> None:
    assert report_target(None) == ReportTarget(REPORTS_DIR, None) == ReportTarget()
    assert research_parser().parse_args(["--out", "a/b.md", "q"]).out == "a/b.md"


def test_out_naming_a_folder_keeps_the_usual_name(tmp_path: Path) -> None:
    (tmp_path / "here").mkdir()
    assert report_target(str(tmp_path / "here")) == ReportTarget(tmp_path / "here")
    # A trailing slash says "a folder" even before it exists (it is created when saving).
    assert report_target(f"{tmp_path}/new/") == ReportTarget(tmp_path / "new")


def test_out_naming_a_new_file_is_that_file_its_parents_to_be_made(tmp_path: Path) -> None:
    target = report_target(str(tmp_path / "a" / "b" / "heat.md"))
    assert target == ReportTarget(tmp_path / "a" / "b", "heat.md")
    assert not (tmp_path / "a").exists(), "nothing is created before the run"


def test_out_never_names_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "mine.md").write_text("x")
    (tmp_path / "link.md").symlink_to(tmp_path / "gone.md")  # dangling: still a name taken
    for name in ("mine.md", "link.md"):
        with pytest.raises(UsageError, match="already exists; choose another name or remove it"):
            report_target(str(tmp_path / name))


def test_out_below_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match=r"file is a file, not a directory"):
        report_target(str(tmp_path / "file" / "sub" / "r.md"))


def test_language_and_length_become_the_report_settings() -> None:
    args = research_parser().parse_args(["--language", "de", "--length", "brief", "q"])
    assert settings_from(args) == {"report_language": "de", "report_length": "brief"}
    with pytest.raises(UsageError, match="invalid choice: 'huge'"):
        research_parser().parse_args(["--length", "huge", "q"])
