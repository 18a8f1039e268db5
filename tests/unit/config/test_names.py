"""`config.names`: each vocabulary of names once, consistent with what it is drawn from."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from deep_research.config import names
from deep_research.config.model_providers import PROVIDERS
from deep_research.config.names import (
    LIBRARY_PROVIDER,
    MODEL_PROVIDERS,
    SEARCH_CHOICES,
    SEARCH_PROVIDERS,
    ConfigError,
)
from deep_research.errors import DeepResearchError

REPO = Path(__file__).resolve().parents[3]


def test_local_is_the_first_model_provider_and_the_rest_are_the_table() -> None:
    assert MODEL_PROVIDERS[0] == "local"
    assert set(MODEL_PROVIDERS[1:]) == set(PROVIDERS) and "local" not in PROVIDERS


def test_search_choices_are_auto_then_every_provider_including_the_library() -> None:
    assert SEARCH_CHOICES == ("auto", *SEARCH_PROVIDERS)
    assert LIBRARY_PROVIDER in SEARCH_PROVIDERS
    assert len(set(SEARCH_PROVIDERS)) == len(SEARCH_PROVIDERS)


def test_the_default_model_is_a_bare_name_for_local() -> None:
    assert names.DEFAULT_LLM_MODEL and ":" not in names.DEFAULT_LLM_MODEL


def test_config_error_is_a_value_error_and_a_deep_research_error() -> None:
    assert issubclass(ConfigError, ValueError) and issubclass(ConfigError, DeepResearchError)


@pytest.mark.slow
def test_importing_names_stays_light() -> None:
    """`--help` lists these without paying for pydantic or LangGraph."""
    code = (
        "import sys, deep_research.config.names\n"
        "heavy = [m for m in ('pydantic', 'langgraph', 'langchain_core') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    env = {"DEEP_RESEARCH_DOTENV": "0", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == ""
