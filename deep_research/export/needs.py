"""What PDF and Word exports need beyond the core install, and the one line to get it.

WeasyPrint (PDF) and pandoc (Word, from `pypandoc-binary`, whose wheel carries it) are
the `export` extra, not core dependencies: together they add ~200 MB (DESIGN.md), and
HTML needs neither. A missing one is a `ReadableError` naming the install to run.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from deep_research.errors import ReadableError

INSTALL = 'pip install -e ".[export]"'


class ExportUnavailableError(ReadableError, ImportError):
    """The format needs a package (or a system library under it) that is not installed."""


def require(module: str, format_name: str) -> ModuleType:
    """`module` imported, or `ExportUnavailableError` saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ExportUnavailableError(
            f"{format_name} export needs {module}, which is not installed: {INSTALL}"
        ) from error
    except OSError as error:  # WeasyPrint installed, but not the Pango it draws text with
        raise ExportUnavailableError(
            f"{format_name} export needs the Pango library for {module} ({error}): on "
            "Debian or Ubuntu, apt-get install libpango-1.0-0 libpangoft2-1.0-0"
        ) from error
