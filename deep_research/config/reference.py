"""The settings reference in docs/configuration.md, written from the code that reads the settings.

`python -m deep_research.config.reference` prints the two tables (every `Context` field,
then every environment-only endpoint); with `--write PAGE` it replaces the text between
each table's markers in PAGE. tests/unit/config/test_reference.py fails when the page and
the code differ, so the page cannot drift from what a run accepts.

Only the standard library is imported here; the settings module (pydantic, LangGraph) is
imported when a table is made, so importing the package stays light.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import types
import typing
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

SETTINGS = ("<!-- settings-reference:start -->", "<!-- settings-reference:end -->")
ENDPOINTS = ("<!-- endpoints-reference:start -->", "<!-- endpoints-reference:end -->")
# `Endpoints`' fields carry no descriptions (nothing shows them in a form), so they are here;
# the test fails when a field is added or removed without this table following.
ENDPOINT_NOTES = {
    "llm_base_url": "the OpenAI-compatible server every `local:` model is called at",
    "llm_api_key": "the key that server wants, if any",
    "llm_timeout": "seconds allowed for each read from a model server (the first mlx "
    "request loads the weights)",
    "llm_max_tokens": "the longest reply a model may write: sent on `local:` (mlx_lm.server's "
    "own default is 512), and under a budget on every provider, where a role whose job needs "
    "less is sent less ([Cost](cost.md#each-roles-completion-limit))",
    "llm_max_retries": "retries of a failed model call (the client's own, or around the call)",
    "llm_call_deadline": "seconds one whole model call may take, retries included, so a "
    "server that trickles its reply cannot hold a run; unset: `LLM_TIMEOUT` × "
    "(`LLM_MAX_RETRIES` + 1), at least 900",
    "openai_api_key": "the key for `openai:` roles",
    "tavily_api_key": "a Tavily key: `auto` then searches with Tavily",
    "tavily_api_base_url": "another Tavily endpoint "
    "(the Tavily client does not read this variable itself)",
    "searxng_url": "a SearXNG instance with the JSON format enabled in its `settings.yml`",
    "arxiv_api_url": "arXiv's Atom API (`search_provider=arxiv`), or a mirror of it",
    "wikipedia_api_url": "a MediaWiki API (`search_provider=wikipedia`); articles are read "
    "from the same host, e.g. `https://de.wikipedia.org/w/api.php`",
    "openalex_api_url": "OpenAlex's works API (`search_provider=openalex`)",
    "europepmc_api_url": "Europe PMC's REST search (`search_provider=europepmc`)",
    "fetch_allow_private": "allow fetching pages at private addresses (metadata services and "
    "link-local addresses stay refused; see [security](security.md))",
    "fetch_allowed_hosts": "hosts page fetching may reach although private, comma-separated",
    "mcp_servers_file": "a JSON file of MCP servers (`mcpServers`) whose tools researchers "
    "may call; only this file configures them ([Search](search.md#tools-of-mcp-servers))",
    "render_pages": "render a fetched page that gives almost no text and looks written by "
    "script in headless Chromium, then read it again ([search](search.md#pages-that-need-a-"
    "browser)); needs the `browser` extra and a Chromium",
    "render_browser": "the Chromium (or Chrome) to run: a path or a command name; unset: "
    "`chromium`, `chromium-browser`, `google-chrome` on PATH",
    "render_max_pages": "pages one search step may render (one at a time)",
    "render_timeout": "seconds one render may take, browser start included",
    "memory_dir": "where the memory and the library are stored, the same for every working "
    "directory and shared by your processes (`MEMORY_SHARE`); set it for a project-local "
    "memory (a relative path is the working directory's)",
    "chroma_host": (
        "a Chroma server to keep them in instead, shared by several processes: a host name"
        " or an http(s):// URL, at most 2,048 characters"
    ),
    "chroma_port": "that server's port",
    "chroma_token": "the token that server asks for (chromadb's token authentication); "
    "see [Beyond one machine](distributed.md)",
    "memory_share": "share the memory directory between your processes (a CLI run beside "
    "`langgraph dev`) through a local Chroma server the first one starts; false: one "
    "process at a time",
    "memory_server_idle": "seconds that server keeps running after the last process using "
    "it ends (`deep-research memory stop` stops it at once)",
}
# A default computed from the environment is shown as the formula, not this machine's value.
ENVIRONMENT_NAMES = {"LLM_MODEL": "$LLM_MODEL"}
# A default computed per platform (`endpoints.default_memory_dir`) is shown as its rule.
PLATFORM_DEFAULTS = {
    "memory_dir": "the user's data directory: `~/.local/share/deep-research/memory` on "
    "Linux (`$XDG_DATA_HOME/deep-research/memory` when set), `~/Library/Application "
    "Support/deep-research/memory` on macOS",
}


def type_name(annotation: Any) -> str:
    """A field's type as a reader names it: `int`, `bool`, `off, on, server`, `float, optional`."""
    if typing.get_origin(annotation) is typing.Literal:
        return ", ".join(f"`{value}`" for value in typing.get_args(annotation))
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        named = [type_name(arg) for arg in typing.get_args(annotation) if arg is not type(None)]
        return " or ".join(named) + ", optional"
    name = getattr(annotation, "__name__", str(annotation))
    return {"SecretStr": "secret", "str": "text"}.get(name, name)


@contextlib.contextmanager
def _formulas() -> Iterator[None]:
    """The environment while defaults are computed: each variable named as `$NAME`."""
    saved = {name: os.environ.get(name) for name in ENVIRONMENT_NAMES}
    os.environ.update(ENVIRONMENT_NAMES)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def default_text(field: Any) -> str:
    """The default as the page shows it: a code span, or `unset`."""
    with _formulas():
        value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value == "":
        return "empty"
    return f"`{value}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def table(fields: dict[str, Any], notes: dict[str, str] | None = None) -> str:
    """One Markdown row per field: name, environment variable, type, default, description."""
    rows = [
        "| setting | environment variable | type | default | what it does |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, field in fields.items():
        about = (notes or {}).get(name) or field.description or ""
        rows.append(
            f"| `{name}` | `{name.upper()}` | {type_name(field.annotation)} "
            f"| {PLATFORM_DEFAULTS.get(name) or default_text(field)} | {_cell(about)} |"
        )
    return "\n".join(rows)


def endpoint_fields() -> dict[str, Any]:
    """`Endpoints`' fields (environment-only)."""
    from deep_research.config.endpoints import Endpoints

    return dict(Endpoints.model_fields)


def settings_table() -> str:
    from deep_research.config.settings import Context

    return table(dict(Context.model_fields))


def endpoints_table() -> str:
    return table(endpoint_fields(), ENDPOINT_NOTES)


def replaced(page: str, markers: tuple[str, str], body: str) -> str:
    """`page` with the text between `markers` replaced by `body`."""
    start, end = markers
    before, rest = page.split(start, 1)
    _, after = rest.split(end, 1)
    return f"{before}{start}\n{body}\n{end}{after}"


def written(page: str) -> str:
    """`page` with both tables as the code makes them."""
    page = replaced(page, SETTINGS, settings_table())
    return replaced(page, ENDPOINTS, endpoints_table())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m deep_research.config.reference",
        description="Print the settings reference, or write it into a page between its markers.",
    )
    parser.add_argument("--write", type=Path, metavar="PAGE", help="e.g. docs/configuration.md")
    args = parser.parse_args(argv)
    if args.write is None:
        print(settings_table(), endpoints_table(), sep="\n\n")
        return 0
    page = args.write.read_text(encoding="utf-8")
    args.write.write_text(written(page), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
