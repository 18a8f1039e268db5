"""`memory.chroma`: chromadb imported without rfc3987-syntax's grammar, which jsonschema
would otherwise build on the way (about 1 s of CPU while the run's first calls wait)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.support.cli import fresh_python

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("rfc3987_syntax") is None,
    reason="rfc3987-syntax is not installed (the notebook extra brings it): nothing to spare",
)


def test_chromadb_is_imported_without_the_iri_grammar_and_it_stays_importable() -> None:
    fresh_python(
        "import sys\n"
        "from deep_research.memory import chroma\n"
        "chromadb = chroma.load()\n"
        "assert chromadb is sys.modules['chromadb'] and 'jsonschema' in sys.modules\n"
        "assert 'rfc3987_syntax' not in sys.modules, 'the grammar was built'\n"
        "import rfc3987_syntax  # whoever asks for it later gets it\n"
        "assert rfc3987_syntax.is_valid_syntax('iri', 'https://example.org/ä')\n"
    )


def test_a_store_opens_through_it_and_chromadb_works_without_that_check(tmp_path: Path) -> None:
    fresh_python(
        "import sys\n"
        "from pathlib import Path\n"
        "from deep_research.memory.location import Location\n"
        "from deep_research.memory.open import open_store_blocking\n"
        f"open_store_blocking(Location(path=Path({str(tmp_path / 'memory')!r})))\n"
        "assert 'chromadb' in sys.modules and 'rfc3987_syntax' not in sys.modules\n"
        "import chromadb\n"
        f"client = chromadb.PersistentClient(path={str(tmp_path / 'plain')!r})\n"
        "client.get_or_create_collection('notes').add(ids=['a'], documents=['x'],\n"
        "    embeddings=[[0.1, 0.2]])\n"
        "assert client.get_collection('notes').count() == 1\n"
    )
