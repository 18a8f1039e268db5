"""A missing export package is one line naming the install to run."""

from __future__ import annotations

import pytest

from deep_research.errors import ReadableError
from deep_research.export.needs import INSTALL, ExportUnavailableError, require


def test_a_missing_package_names_the_install() -> None:
    with pytest.raises(ExportUnavailableError) as caught:
        require("no_such_export_package", "PDF")
    assert isinstance(caught.value, ReadableError)
    assert str(caught.value) == (
        f"PDF export needs no_such_export_package, which is not installed: {INSTALL}"
    )
    assert INSTALL == 'pip install -e ".[export]"'


def test_a_missing_system_library_names_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pango(name: str) -> None:
        raise OSError("cannot load library 'libpango-1.0-0'")

    monkeypatch.setattr("importlib.import_module", no_pango)
    with pytest.raises(ExportUnavailableError, match="apt-get install libpango-1.0-0"):
        require("weasyprint", "PDF")


def test_the_installed_ones_load() -> None:
    assert require("weasyprint", "PDF").__name__ == "weasyprint"
    assert require("pypandoc", "Word").__name__ == "pypandoc"
