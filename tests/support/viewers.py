"""Looking at an export as a person would: headless Chromium, pdftoppm, a request counter.

Chromium and poppler-utils are Debian packages `.ci/run` installs. A test that needs one
fails, naming the install, when it is missing: a silent skip would pass in CI forever.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PIL import Image

VIEWER_TIMEOUT = 90.0
INSTALL = "apt-get install -y chromium poppler-utils (.ci/run installs them)"


def tool(name: str) -> str:
    """The path of `name`, or a test failure saying how to install it."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: {INSTALL}", pytrace=False)
    return path


def chromium(page: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on `page` with its own throwaway profile."""
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        return subprocess.run(
            [
                tool("chromium"),
                "--headless",
                "--no-sandbox",  # root in CI; the page is ours and offline
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--virtual-time-budget=3000",  # let timers and loads (if any) happen
                *flags,
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=VIEWER_TIMEOUT,
            check=True,
        )


def dom_after_load(page: Path) -> str:
    """The page's DOM as Chromium has it after loading (and running whatever it could)."""
    return chromium(page, "--dump-dom").stdout


def screenshot(page: Path, png: Path) -> Image.Image:
    chromium(page, f"--screenshot={png}", "--window-size=900,1200", "--hide-scrollbars")
    return Image.open(png).convert("RGB")


def colours(image: Image.Image) -> int:
    """How many distinct colours an image has: a blank page has one or two."""
    return len(image.getcolors(maxcolors=1 << 20) or [])


def pdf_pages_as_png(pdf: Path, out: Path) -> list[Image.Image]:
    subprocess.run(
        [tool("pdftoppm"), "-png", "-r", "40", str(pdf), str(out / "page")],
        check=True,
        capture_output=True,
        timeout=VIEWER_TIMEOUT,
    )
    return [Image.open(path).convert("RGB") for path in sorted(out.glob("page*.png"))]


@contextmanager
def counting_server() -> Iterator[tuple[str, list[str]]]:
    """A server on 127.0.0.1 that records every request path: what a page loaded."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"x")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", seen
    finally:
        server.shutdown()
        server.server_close()
