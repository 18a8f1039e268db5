"""DeepResearch Bench export: run the graph on the benchmark's queries, write its submission file.

python -m evals.drb --queries query.jsonl --out NAME.jsonl [--limit N]

Each input line is `{"id": ..., "prompt": "..."}`; each output line is
`{"id", "prompt", "article"}` with the id and prompt copied exactly and the report as the
article: inline citations stay Markdown links, and text fragments (`#:~:text=...`) are
cut from their URLs, because the benchmark's citation check (FACT) groups citations by
exact URL and would count one page as several.

Resumable: ids already in the output file are skipped, and a last line cut off by an
interrupted run is dropped and redone. Every query line is checked before the first run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deep_research.text.urls import DIRECTIVE_DELIMITER

# A URL in Markdown: up to whitespace or what closes a link, an autolink or a bracket.
# Balanced parentheses belong to it (Wikipedia's "Foo_(bar)"), sentence punctuation after a
# bare URL does not.
_URL = re.compile(r"https?://(?:[^\s()<>\]\"']|\([^\s()<>]*\))*(?<![.,;:!?])")


class DrbInputError(ValueError):
    """A query file or output file the export cannot use; the message names file and line."""


def strip_fragments(article: str) -> str:
    """Every URL without its text-fragment directive (`#:~:...`); other fragments stay."""

    def strip(match: re.Match[str]) -> str:
        url = match.group(0)
        base, sep, fragment = url.partition("#")
        if not sep or DIRECTIVE_DELIMITER not in fragment:
            return url
        kept = fragment.partition(DIRECTIVE_DELIMITER)[0]
        return f"{base}#{kept}" if kept else base

    return _URL.sub(strip, article)


def _key(value: Any) -> str:
    """Ids compare by their JSON text: 1 and "1" are different ids, as in the file."""
    return json.dumps(value, ensure_ascii=False)


def read_queries(path: Path) -> list[dict[str, Any]]:
    """The query lines, checked: JSON objects with an id and a non-empty prompt, ids unique."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DrbInputError(f"{path}: cannot read ({error})") from None
    queries: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            item = json.loads(line)
        except (ValueError, RecursionError) as error:  # ValueError: also a 5000-digit number
            raise DrbInputError(f"{where}: not JSON ({_why(error)})") from None
        if not isinstance(item, dict):
            raise DrbInputError(f'{where}: needs an object {{"id": ..., "prompt": "..."}}')
        if (
            "id" not in item
            or not isinstance(item["id"], int | str)
            or isinstance(item["id"], bool)
        ):
            raise DrbInputError(f"{where}: needs an 'id' (a number or a string)")
        prompt = item.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise DrbInputError(f"{where}: needs a non-empty 'prompt' string")
        key = _key(item["id"])
        if key in first_line:
            raise DrbInputError(f"{where}: id {key} repeats line {first_line[key]}")
        first_line[key] = number
        queries.append({"id": item["id"], "prompt": prompt})
    if not queries:
        raise DrbInputError(f"{path}: no queries")
    return queries


def _why(error: ValueError | RecursionError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return error.msg
    if isinstance(error, RecursionError):
        return "nested too deep"
    return "a number too long to read"  # Python refuses integers of over 4300 digits


def done_ids(out: Path) -> set[str]:
    """Ids already exported. A last line without its newline (a run cut off while writing)
    is removed so it is written again; a broken line before it is an error."""
    if not out.exists():
        return set()
    raw = out.read_bytes()
    complete, _, partial = raw.rpartition(b"\n")
    if partial:
        out.write_bytes(complete + b"\n" if complete else b"")
        raw = out.read_bytes()
    ids: set[str] = set()
    for number, line in enumerate(raw.decode("utf-8", errors="replace").split("\n"), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            item = None
        if not isinstance(item, dict) or "id" not in item:
            raise DrbInputError(
                f"{out}:{number}: not an exported line; move the file away or fix that line"
            )
        ids.add(_key(item["id"]))
    return ids


def submission_line(query: dict[str, Any], report: str) -> str:
    item = {"id": query["id"], "prompt": query["prompt"], "article": strip_fragments(report)}
    try:
        line = json.dumps(item, ensure_ascii=False)
        line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in the prompt: JSON's escapes keep it exact
        line = json.dumps(item)
    return line + "\n"


async def export(queries: list[dict[str, Any]], out: Path, limit: int | None = None) -> int:
    """Run the graph on each query not yet in `out`; the number written this time."""
    from evals.run import run_question

    done = done_ids(out)
    todo = [q for q in queries if _key(q["id"]) not in done][:limit]
    total, already = len(queries), sum(_key(q["id"]) in done for q in queries)
    print(f"{already} of {total} already in {out}; {len(todo)} to run", file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    for index, query in enumerate(todo, already + 1):
        print(f"[{index}/{total}] {_key(query['id'])}: researching", file=sys.stderr, flush=True)
        outputs = await run_question(query["prompt"])
        with out.open("a", encoding="utf-8") as file:
            file.write(submission_line(query, outputs["final_report"]))
        words = len(outputs["final_report"].split())
        print(f"[{index}/{total}] {_key(query['id'])}: {words} words", file=sys.stderr)
    return len(todo)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.drb",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--queries", type=Path, required=True, help="the benchmark's query.jsonl")
    parser.add_argument("--out", type=Path, required=True, help="submission file (JSONL)")
    parser.add_argument("--limit", type=int, help="run at most N queries this time")
    args = parser.parse_args(argv)
    from deep_research.llm.models import ModelEndpointError

    try:
        queries = read_queries(args.queries)
        written = asyncio.run(export(queries, args.out, args.limit))
    except DrbInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ModelEndpointError as error:
        print(f"error: {error}\nRun the same command again to continue.", file=sys.stderr)
        return 1
    print(f"wrote {written} articles to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
