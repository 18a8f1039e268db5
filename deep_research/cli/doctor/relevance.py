"""`deep-research doctor`'s relevance-model check, and `doctor --fetch`.

The check says where all-MiniLM-L6-v2's files are (the weights package, the Hugging Face
cache, or not yet downloaded), checks their SHA-256 and embeds one query. It never
downloads: `--fetch` does, with a progress bar, before the checks run.
"""

from __future__ import annotations

import asyncio
import sys
import time

from deep_research.cli.doctor.checks import PROBE_QUERY, Check, off_loop
from deep_research.config.settings import Context
from deep_research.embedding import files, loader

NAME = "relevance model"


async def check_relevance(context: Context, deadline: float) -> Check:
    """Where the model's files are, and whether they load and embed within `deadline`."""
    found = files.locate()
    if found is None:
        if not context.relevance_filter:
            return Check(NAME, "ok", "not installed; not needed (relevance_filter=false)")
        if files.offline():
            return Check(
                NAME,
                "fail",
                f"all-MiniLM-L6-v2 is neither installed nor in the Hugging Face cache "
                f"({files.cache_dir()}), and HF_HUB_OFFLINE forbids downloading it",
                f"install it: {files.OFFLINE_LINE}",
            )
        return Check(
            NAME,
            "warn",
            f"all-MiniLM-L6-v2 not yet downloaded (about {files.DOWNLOAD_MB} MB from "
            f"{files.endpoint()})",
            f"run `{files.FETCH_LINE}` now, or the first run downloads it; offline: "
            f"{files.OFFLINE_LINE}",
        )

    from deep_research.embedding.encoder import EncoderError  # numpy: not at import

    def load() -> int:
        loader.weights()  # the SHA-256 check, then the model itself
        return len(loader.embedder().embed_query(PROBE_QUERY))

    started = time.monotonic()
    try:
        async with asyncio.timeout(deadline):
            dimensions = await off_loop(load)
    except TimeoutError:
        return Check(
            NAME,
            "fail",
            f"all-MiniLM-L6-v2 {found.describe()} did not load within {deadline:g} s",
            "re-run doctor: a cold, busy disk can be this slow once",
        )
    except (files.WeightsUnavailable, EncoderError) as error:  # its message names the fix
        return Check(NAME, "fail", str(error))
    except (OSError, RuntimeError, ValueError) as error:
        return Check(
            NAME,
            "fail",
            f"all-MiniLM-L6-v2 {found.describe()} failed to load: {type(error).__name__}: {error}",
            f"fetch it again: {files.FETCH_LINE}",
        )
    seconds = time.monotonic() - started
    off = "; unused by runs (relevance_filter=false)" if not context.relevance_filter else ""
    return Check(
        NAME,
        "ok",
        f"all-MiniLM-L6-v2 {found.describe()}, SHA-256 checked, loaded in {seconds:.1f} s "
        f"({dimensions}-dimensional embeddings){off}",
    )


def fetch() -> bool:
    """`doctor --fetch`: the model's files on this machine, downloaded (or repaired) when
    they are not already installed; one line on stderr either way. False when it failed."""
    say = print_err
    try:
        found = files.locate()
        if found is not None and found.source == "package":
            files.checked(found)
            say(f"relevance model: all-MiniLM-L6-v2 {found.describe()}, nothing to download")
            return True
        weights = files.fetch(say=say)
    except files.WeightsUnavailable as error:
        say(f"relevance model: {error}")
        return False
    say(f"relevance model: all-MiniLM-L6-v2 {weights.describe()}, SHA-256 checked")
    return True


def print_err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
