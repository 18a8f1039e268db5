"""Loading the relevance model prints nothing of its own: no progress bars, no warnings.

It runs in a fresh interpreter (the load happens once per process) with an explicit
environment, so no `HF_HUB_DISABLE_PROGRESS_BARS` or `TQDM_DISABLE` from a developer's shell
can hide a bar.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.cli import CLI_TIMEOUT, REPO

LOAD_AND_REPORT = """
from deep_research.search.relevance import cosine_scores
from huggingface_hub.utils import are_progress_bars_disabled
from transformers.utils import logging

scores = cosine_scores("heat pumps", ["Heat pumps in cold climates"])
assert scores[0] > 0.5, scores
# Put back after the load: transformers' and huggingface_hub's own bars stay the user's call.
print("bars on after load:", logging.is_progress_bar_enabled(), not are_progress_bars_disabled())
print("verbosity after load:", logging.get_verbosity())
"""


def test_relevance_model_loads_without_bars_or_warnings_and_restores_bar_settings() -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", LOAD_AND_REPORT],
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr  # the bar ("Loading weights: 100%|…") went here
    assert done.stdout.splitlines() == [
        "bars on after load: True True",
        "verbosity after load: 30",  # logging.WARNING, transformers' default
    ]
