"""What an install costs: a fresh venv's size, package count and `pip install` time.

    python -m benchmarks.install                 # `pip install -e .`, the user's install
    python -m benchmarks.install --extra dev     # `pip install -e ".[dev]"`, the tests'
    python -m benchmarks.install --python python3.12 --json

Each run copies the checkout (without .venv and .git) to a temporary folder, makes a venv
there with the Python named (its own pip, not upgraded, as a new user has), and times the
install the README gives. `--no-cache` empties pip's cache for the run (downloads
included in the time); by default pip's cache is used as a user's second install would.
Also reports whether torch, transformers, sentence-transformers, scipy or scikit-learn
came in (none should) and the largest packages. Needs the package registry; not a test.
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
HEAVY = ("torch", "transformers", "sentence-transformers", "scipy", "scikit-learn")
SKIP = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", ".mypy_cache")


def measure(python: str, extra: str | None, no_cache: bool) -> dict[str, Any]:
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
        sizes = _package_sizes(venv)
        return {
            "python": python,
            "install": f"pip install -e {target!r}" if extra else "pip install -e .",
            "seconds": round(seconds, 1),
            "venv_mb": round(_size(venv) / 1e6),
            "packages": len(names),
            "heavy": sorted(name for name in HEAVY if name in names),
            "largest_mb": {name: round(size / 1e6) for name, size in sizes[:8]},
        }


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


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
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.python, args.extra, args.no_cache)
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['install']} with {args.python}: {result['seconds']} s, "
        f"{result['venv_mb']} MB, {result['packages']} packages; "
        f"heavy: {', '.join(result['heavy']) or 'none'}"
    )
    print("largest:", ", ".join(f"{k} {v} MB" for k, v in result["largest_mb"].items()))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
