"""The real MiniLM files, for the tests of where they come from, and the model on them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from deep_research.embedding import files

if TYPE_CHECKING:
    from deep_research.embedding.minilm import MiniLM


@pytest.fixture(scope="module")
def real_weights() -> Path:
    """The real files, from wherever this machine has them (CI: the weights package)."""
    found = files.locate()
    assert found is not None, f"install the model's files first: {files.OFFLINE_LINE}"
    return files.checked(found).folder


@pytest.fixture(scope="module")
def ours() -> MiniLM:
    """Our MiniLM on the installed weights package's files (imported here: the other
    tests in this folder need neither the model nor that package)."""
    from deep_research.embedding.minilm import MiniLM
    from tests.support.minilm_reference import FOLDER

    return MiniLM(FOLDER)
