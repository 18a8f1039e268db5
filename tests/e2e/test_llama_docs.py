"""The real model's install lines are one set: what `.ci/llama` runs, what a test that
misses them prints, and what docs/servers.md tells a user; its launch flags are the ones
`tests/support/llama_server.py` starts the server with."""

from __future__ import annotations

import shlex

from tests.support.llama_server import INSTALL
from tests.support.readme import REPO, block_after

CI_LLAMA = (REPO / ".ci" / "llama").read_text(encoding="utf-8")
STARTER = (REPO / "tests" / "support" / "llama_server.py").read_text(encoding="utf-8")


def test_ci_installs_what_the_failing_test_asks_for() -> None:
    ci = [line for line in CI_LLAMA.splitlines() if ".venv-llama" in line and line[0] != "#"]
    assert ci == INSTALL.split(" && ")
    assert "bash .ci/llama" in (REPO / ".ci" / "run").read_text().split("python -m pytest")[0]


def test_the_pages_lines_are_the_ones_ci_and_the_tests_run() -> None:
    lines = block_after("<!-- llama-install").replace("\\\n", "").strip().splitlines()
    commands = [shlex.split(line, comments=True) for line in lines]
    assert [" ".join(c) for c in commands[:2]] == [
        " ".join(shlex.split(line)) for line in INSTALL.split(" && ")[:2]
    ]
    program, *args = commands[2]
    assert program == ".venv-llama/bin/python" and args[:2] == ["-m", "llama_cpp.server"]
    flags = dict(zip(args[2::2], args[3::2], strict=True))
    assert set(flags) == {"--model", "--model_alias", "--n_ctx", "--host", "--port"}
    for flag in flags:
        assert f'"{flag}"' in STARTER, flag
    assert flags["--n_ctx"] == "8192"
