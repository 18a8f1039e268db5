"""Run the evaluators: offline over saved outputs, or through LangSmith over the dataset.

python -m evals.run --offline [PATH ...]     saved outputs (JSON files or folders)
python -m evals.run --offline --judge local:MODEL [PATH ...]  plus the LLM judges
python -m evals.run --live-links [PATH ...]  the same, plus checking cited pages answer
python -m evals.run --generate DIR [--limit N] [--set KEY=VALUE ...]  run the graph on the
                                             dataset with those settings, save outputs
python -m evals.run --langsmith DATASET [--judge SPEC] [--limit N]  LangSmith experiment
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from deep_research.config.names import ConfigError
from evals.evaluators import OFFLINE_EVALUATORS, Score
from evals.judge_model import Judge, judge_from_spec

HERE = Path(__file__).parent
DATASET = HERE / "dataset.jsonl"
SAMPLES = HERE / "samples"


class EvalInputError(ValueError):
    """A saved output or dataset line that cannot be evaluated; names the file."""


def load_questions(path: Path = DATASET) -> list[dict[str, Any]]:
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise EvalInputError(f"{path}:{number}: not JSON ({error.msg})") from None
        if not isinstance(item, dict) or not isinstance(item.get("question"), str):
            raise EvalInputError(f'{path}:{number}: needs {{"id": ..., "question": "..."}}')
        questions.append(item)
    return questions


def load_outputs(paths: Sequence[Path]) -> list[tuple[Path, dict[str, Any]]]:
    """Saved outputs: JSON objects with `final_report` and `sources`, e.g. a thread's values."""
    files = [f for p in paths for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    if not files:
        raise EvalInputError(f"no saved outputs (*.json) in {', '.join(map(str, paths))}")
    loaded = []
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise EvalInputError(f"{file}: {error}") from None
        if not isinstance(data, dict) or not isinstance(data.get("final_report"), str):
            raise EvalInputError(f"{file}: needs a 'final_report' string and a 'sources' list")
        loaded.append((file, data))
    return loaded


def facets_for(outputs: Mapping[str, Any]) -> list[str]:
    """The facets a saved output is judged on: its own, else its question's in the dataset."""
    if isinstance(outputs.get("facets"), list):
        return list(outputs["facets"])
    by_question = {q["question"]: q.get("facets") or [] for q in load_questions()}
    return list(by_question.get(str(outputs.get("question")), []))


async def evaluate_outputs(
    outputs: Mapping[str, Any], live_links: bool = False, judge: Judge | None = None
) -> list[Score]:
    scores = [evaluator(outputs) for evaluator in OFFLINE_EVALUATORS]
    if live_links:
        from evals.live_links import live_links as check_links

        scores.append(await check_links(outputs))
    if judge is not None:
        from evals.judges import make_judges

        inputs = {"question": outputs.get("question")}
        reference = {"facets": facets_for(outputs)}
        for evaluator in make_judges(judge):
            scores.append(
                await evaluator(inputs=inputs, outputs=outputs, reference_outputs=reference)
            )
    return scores


async def _evaluate_all(
    saved: list[tuple[Path, dict[str, Any]]], live_links: bool, judge: Judge | None
) -> list[tuple[Path, list[Score]]]:
    # One event loop for every file: the judge's HTTP client lives as long as it does.
    return [(file, await evaluate_outputs(o, live_links, judge)) for file, o in saved]


def _table(results: list[tuple[Path, list[Score]]]) -> str:
    lines = []
    for file, scores in results:
        lines.append(file.name)
        for score in scores:
            shown = "n/a" if score["score"] is None else f"{score['score']:.2f}"
            lines.append(f"  {score['key']:<20} {shown:>5}  {score['comment']}")
    return "\n".join(lines)


async def run_question(question: str, context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One research run without clarification or plan review; the outputs evaluators read."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from deep_research.config.settings import load_context
    from deep_research.graph import builder

    graph = builder.compile(checkpointer=InMemorySaver())
    state = await graph.ainvoke(
        {"messages": [HumanMessage(question)]},
        {"configurable": {"thread_id": "eval"}},
        # Nobody can answer a plan review here, even with REVIEW_PLAN=true in the environment.
        context=load_context(
            {"allow_clarification": False, **(context or {}), "review_plan": False}
        ),
    )
    return {
        "question": question,
        "final_report": state["final_report"],
        "sources": state.get("sources", []),
        "citation_check": state.get("citation_check"),
    }


async def generate(
    out_dir: Path, limit: int | None, settings: Mapping[str, Any] | None = None
) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for item in load_questions()[:limit]:
        outputs = await run_question(item["question"], settings)
        outputs["facets"] = item.get("facets") or []
        path = out_dir / f"{item.get('id') or len(written)}.json"
        path.write_text(json.dumps(outputs, indent=2, ensure_ascii=False), encoding="utf-8")
        written.append(path)
    return written


def langsmith_examples() -> list[dict[str, Any]]:
    """dataset.jsonl as LangSmith examples: the question in, the facets as reference."""
    return [
        {"inputs": {"question": q["question"]}, "outputs": {"facets": q.get("facets") or []}}
        for q in load_questions()
    ]


def langsmith_evaluators(live_links: bool, judge: Judge | None) -> list[Any]:
    evaluators: list[Any] = list(OFFLINE_EVALUATORS)
    if live_links:
        from evals.live_links import live_links as check_links

        evaluators.append(check_links)
    if judge is not None:
        from evals.judges import make_judges

        evaluators.extend(make_judges(judge))
    return evaluators


def run_langsmith(
    dataset_name: str, live_links: bool, judge: Judge | None = None, limit: int | None = None
) -> None:
    """A LangSmith experiment; creates the dataset from dataset.jsonl if it does not exist.

    With `limit`, the experiment runs on the dataset's first `limit` examples only."""
    from langsmith import Client, aevaluate

    client = Client()
    if not client.has_dataset(dataset_name=dataset_name):
        dataset = client.create_dataset(dataset_name, description="deep_research questions")
        client.create_examples(dataset_id=dataset.id, examples=langsmith_examples())

    async def target(inputs: dict[str, Any]) -> dict[str, Any]:
        return await run_question(inputs["question"])

    evaluators = langsmith_evaluators(live_links, judge)
    data: Any = dataset_name
    if limit is not None:
        data = list(client.list_examples(dataset_name=dataset_name, limit=limit))
    asyncio.run(aevaluate(target, data=data, evaluators=evaluators, max_concurrency=1))


def parse_settings(pairs: Sequence[str]) -> dict[str, Any]:
    """`--set key=value` pairs; values stay strings, and `Context` converts and checks them."""
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise EvalInputError(f"--set {pair!r}: use KEY=VALUE, e.g. researcher_model=local:x")
        settings[key.strip()] = value
    return settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--offline", action="store_true", help="no network: saved outputs only")
    mode.add_argument("--generate", type=Path, metavar="DIR", help="run the graph, save outputs")
    mode.add_argument("--langsmith", metavar="DATASET", help="run a LangSmith experiment")
    parser.add_argument("--live-links", action="store_true", help="also fetch every cited URL")
    parser.add_argument(
        "--limit", type=int, help="with --generate or --langsmith: first N questions only"
    )
    parser.add_argument("--json", action="store_true", help="print scores as JSON")
    parser.add_argument(
        "--judge", metavar="PROVIDER:MODEL", help="also run the LLM judges with this model"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --generate: a setting for the runs (a Context field), repeatable",
    )
    parser.add_argument("paths", nargs="*", type=Path, help=f"saved outputs (default {SAMPLES})")
    args = parser.parse_args(argv)
    if args.offline and args.live_links:
        parser.error("--live-links needs the network; drop --offline")
    try:
        judge = judge_from_spec(args.judge) if args.judge else None
        settings = parse_settings(args.set)
    except (ConfigError, EvalInputError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.langsmith:
        run_langsmith(args.langsmith, args.live_links, judge, args.limit)
        return 0
    if args.generate:
        from pydantic import ValidationError

        from deep_research.config.settings import load_context

        try:  # checked before the first run, not after it
            load_context({"allow_clarification": False, **settings})
        except (ConfigError, ValidationError) as error:
            print(f"error: --set: {error}", file=sys.stderr)
            return 2
        for path in asyncio.run(generate(args.generate, args.limit, settings)):
            print(f"wrote {path}")
        return 0
    try:
        saved = load_outputs(args.paths or [SAMPLES])
    except EvalInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    results = asyncio.run(_evaluate_all(saved, args.live_links, judge))
    if args.json:
        print(json.dumps({str(f): scores for f, scores in results}, indent=2))
    else:
        print(_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
