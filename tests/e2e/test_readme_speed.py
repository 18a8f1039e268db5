"""Every number of the Speed page is what `python -m benchmarks` prints for its cases."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.readme import page_with

# The Speed table's columns, in the order `benchmarks.__main__.markdown` prints them.
SPEED_COLUMNS = (
    ("profile", str),
    ("k", int),
    ("model_calls", int),
    ("prompt_tokens", int),
    ("processed_tokens", int),
    ("completion_tokens", int),
    ("searches", int),
    ("page_fetches", int),
    ("process_start_s", float),
    ("report_s", float),
    ("wall_s", float),
    ("model_critical_path_s", float),
    ("ratio", float),
    ("longest_gap_s", float),
    ("parallel_efficiency", float),
    ("peak_rss_mb", int),
)
STARTUP = re.compile(
    r"^Start-up \(median of (\d+)\): `import deep_research.graph` ([\d.]+) s, "
    r"`deep-research --help` ([\d.]+) s \(([\d.]+)x\)\.$",
    re.MULTILINE,
)


def test_the_speed_table_is_what_python_m_benchmarks_prints_for_its_cases(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every number of the Speed page is one `python -m benchmarks` printed, in its format,
    for exactly the cases that command runs: the page's numbers are fed back through the
    command's own printer, with its own arguments, and must come out as the page shows them."""
    import benchmarks.__main__ as bench

    page = page_with("<!-- benchmark-table")
    table = block_lines(page, "<!-- benchmark-table")
    cases = []
    for line in table[2:]:
        cells = [cell.strip().replace(",", "") for cell in line.strip("|").split("|")]
        assert len(cells) == len(SPEED_COLUMNS), line
        case: dict[str, Any] = {
            name: kind(cell) for (name, kind), cell in zip(SPEED_COLUMNS, cells, strict=True)
        }
        cases.append({**case, "roles": {}, "idle_gaps": [], "time_scale": 1})
    [(runs, graph_s, help_s, ratio)] = STARTUP.findall(page)
    startup = {
        "runs": int(runs),
        "import_graph_s": float(graph_s),
        "help_s": float(help_s),
        "help_over_import": float(ratio),
    }
    assert abs(float(help_s) / float(graph_s) - float(ratio)) < 0.01, "the ratio is the two times'"
    asked: list[tuple[list[str], list[int], int]] = []

    def measured(
        profiles: list[str],
        ks: list[int],
        startup_runs: int,
        load: int = 0,
        sections: tuple[str, ...] = ("auto",),
    ) -> dict[str, Any]:
        assert load == 0, "the page's table ran on an otherwise idle run (no --busy)"
        assert sections == ("auto",), "the page's table is the report written as by default"
        asked.append((profiles, ks, startup_runs))
        return {"cases": cases, "startup": startup}

    monkeypatch.setattr(bench, "measure", measured)
    bench.main([])  # the page's command: `python -m benchmarks`, every case
    printed = capsys.readouterr().out.splitlines()
    [(profiles, ks, startup_runs)] = asked
    assert [(c["profile"], c["k"]) for c in cases] == [(p, k) for p in profiles for k in ks]
    assert startup_runs == startup["runs"]
    assert printed[: len(table)] == table
    assert STARTUP.search("\n".join(printed)).group(0) in page  # type: ignore[union-attr]


def block_lines(page: str, marker: str) -> list[str]:
    """The Markdown table right after `marker`, line by line."""
    after = page.split(marker, 1)[1].split("\n", 1)[1]
    lines = []
    for line in after.splitlines():
        if not line.startswith("|"):
            break
        lines.append(line)
    assert len(lines) > 2, "a header, its rule and rows"
    return lines
