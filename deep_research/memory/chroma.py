"""chromadb, imported without the IRI grammar it never uses.

chromadb imports jsonschema, and jsonschema checks the `iri` format with rfc3987-syntax
when that is installed (jupyter's `jsonschema[format-nongpl]` installs it: the notebook
extra). rfc3987-syntax builds its Lark grammar as it is imported: about 1 s of CPU of the
1.8 s chromadb's import takes (`python -X importtime -c "import chromadb"`), while the
run's first calls wait for the interpreter. Nothing here checks `iri` formats (jsonschema
checks formats only when asked), so while chromadb is imported that import fails, as if
the package were absent, and jsonschema goes without that one check.
"""

from __future__ import annotations

import sys
from types import ModuleType

GRAMMAR = "rfc3987_syntax"


def load() -> ModuleType:
    """The chromadb module, imported the first time without `GRAMMAR` (see above)."""
    if "jsonschema" in sys.modules or GRAMMAR in sys.modules:
        import chromadb  # jsonschema is imported already: nothing left to spare

        return chromadb
    sys.modules[GRAMMAR] = None  # type: ignore[assignment]  # its import fails, as if absent
    try:
        import chromadb
    finally:
        if sys.modules.get(GRAMMAR, GRAMMAR) is None:  # another thread's may be gone already
            sys.modules.pop(GRAMMAR, None)  # anyone who asks for it later gets it
    return chromadb
