"""A Chroma whose server cannot run: put this folder first on PYTHONPATH.

In the memory's keeper (the process that runs Chroma's server) importing Chroma's bindings
fails, as on an install whose server part is broken; everywhere else this module hands
over to the real bindings, so the embedded store a process falls back to is the real one.
"""

import importlib
import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parents[1])

if sys.argv and sys.argv[0].endswith("keeper.py"):
    raise ImportError("Chroma's server cannot run on this install (a test's broken Chroma)")

sys.path[:] = [entry for entry in sys.path if str(Path(entry or ".").resolve()) != _HERE]
del sys.modules[__name__]
sys.modules[__name__] = importlib.import_module(__name__)
