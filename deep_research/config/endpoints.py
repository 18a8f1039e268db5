"""Where the agent connects and with which keys: `Endpoints`, which only the environment sets.

Endpoints, keys and anything that widens what the agent may reach are a property of the
machine, never of a run, so no per-run context can name them (see `settings.Context`).
"""

from __future__ import annotations

import functools
import os

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# The key `Endpoints` itself holds; other providers' credentials are in `model_providers`.
PROVIDER_KEYS = {"openai": "OPENAI_API_KEY"}
# The least a whole model call is allowed by default: loading weights, then a long report.
MIN_CALL_DEADLINE = 900.0
APP_NAME = "deep-research"  # the folder named after the app in the user's data directory
# What the default memory directory is computed from (platformdirs reads them), so a change
# to one is a new environment for `read_endpoints`' cache.
DATA_HOME_VARIABLES = ("XDG_DATA_HOME", "HOME", "LOCALAPPDATA", "APPDATA")
MIN_TOKEN, MAX_TOKEN = 16, 512
MAX_API_URL = 2_048
API_URL_RULE = (
    "must be an http:// or https:// URL with a host and a path, without credentials, "
    "a query or a fragment (e.g. https://export.arxiv.org/api/query)"
)
# Said without the value: a validation error's text is printed, and must not show the token.
CHROMA_TOKEN_RULE = (
    f"CHROMA_TOKEN must be {MIN_TOKEN} to {MAX_TOKEN} printable ASCII characters without "
    "spaces (e.g. `openssl rand -hex 32`)"
)


def default_memory_dir() -> str:
    """The user's own memory, whatever the working directory: `memory` in the user's data
    directory (`~/.local/share/deep-research/memory` on Linux, `~/Library/Application
    Support/deep-research/memory` on macOS). A notebook in `examples/`, a CLI run in another
    folder and `langgraph dev` all find the same reports and the same library there."""
    import platformdirs  # ~20 ms to import: only for a process that asks where memory is

    return str(platformdirs.user_data_path(APP_NAME) / "memory")


class Endpoints(BaseSettings):
    """Environment-only settings: where the agent connects and with which keys."""

    # Inputs are hidden in errors: a rejected value may be a key or a token.
    model_config = SettingsConfigDict(
        env_ignore_empty=True, extra="ignore", frozen=True, hide_input_in_errors=True
    )

    llm_base_url: str = "http://localhost:8080/v1"
    llm_api_key: SecretStr | None = None
    llm_timeout: float = Field(default=600.0, gt=0)
    llm_max_tokens: int = Field(default=8192, ge=256)
    llm_max_retries: int = Field(default=2, ge=0, le=10)
    # LLM_TIMEOUT bounds each read, so a server that trickles bytes or sends only keep-alives
    # never trips it; this bounds one whole model call, retries included (unset: `call_deadline`).
    llm_call_deadline: float | None = Field(default=None, gt=0)
    openai_api_key: SecretStr | None = None
    tavily_api_key: SecretStr | None = None
    tavily_api_base_url: str | None = None
    searxng_url: str | None = None
    # The keyless scholarly and encyclopedic sources' APIs (a mirror's, or a test's fake).
    arxiv_api_url: str = "https://export.arxiv.org/api/query"
    wikipedia_api_url: str = "https://en.wikipedia.org/w/api.php"
    openalex_api_url: str = "https://api.openalex.org/works"
    europepmc_api_url: str = "https://www.ebi.ac.uk/europepmc/webservices/rest/search"
    # Widening what page fetching may reach is a property of the machine, never of a run.
    fetch_allow_private: bool = False
    fetch_allowed_hosts: str = ""
    # The operator's MCP servers (config/mcp_servers.py): only this file names them.
    mcp_servers_file: str | None = None
    # Rendering pages whose text a script writes runs a browser on this machine: the
    # machine's choice, never a run's (search/browser.py, docs/search.md).
    render_pages: bool = False
    render_browser: str | None = Field(default=None, max_length=4096)
    render_max_pages: int = Field(default=2, ge=1, le=20)
    render_timeout: float = Field(default=20.0, ge=2, le=120)
    # Where the memory lives (see `deep_research.memory.location`): a directory for one
    # process, or a Chroma server shared by several. MEMORY_DIR asks for another directory
    # (a relative one is the working directory's: a project-local memory).
    memory_dir: str = Field(default_factory=default_memory_dir)
    chroma_host: str | None = Field(default=None, max_length=MAX_API_URL)  # a URL at most
    chroma_port: int = Field(default=8000, ge=1, le=65535)
    # Sent as `Authorization: Bearer` to CHROMA_HOST (chromadb's token authentication).
    chroma_token: SecretStr | None = None
    # Without CHROMA_HOST, the processes of one user share MEMORY_DIR through a Chroma server
    # the first of them starts (`memory.sharing`), which stops MEMORY_SERVER_IDLE seconds
    # after the last one ends; false: each process opens the directory itself, one at a time.
    memory_share: bool = True
    memory_server_idle: float = Field(default=300.0, gt=0, le=7 * 24 * 3600)

    @field_validator("arxiv_api_url", "wikipedia_api_url", "openalex_api_url", "europepmc_api_url")
    @classmethod
    def _api_url(cls, url: str) -> str:
        """An http(s) URL with a host, without credentials, a query or a fragment."""
        from urllib.parse import urlsplit

        printable = url.isascii() and url.isprintable() and " " not in url
        parts = urlsplit(url) if printable and len(url) <= MAX_API_URL else None
        if (
            parts is None
            or parts.scheme not in ("http", "https")
            or not parts.hostname
            or parts.username is not None
            or parts.query
            or parts.fragment
        ):
            raise ValueError(API_URL_RULE)
        return url

    @field_validator("render_browser")
    @classmethod
    def _browser_path(cls, path: str | None) -> str | None:
        """A path or command name: printable, on one line (it is run, and shown by doctor)."""
        if path is not None and not (path.strip() and path.isprintable()):
            raise ValueError("RENDER_BROWSER must be a browser's path or command name")
        return path

    @field_validator("chroma_token")
    @classmethod
    def _header_safe(cls, token: SecretStr | None) -> SecretStr | None:
        """A token goes into a header: printable ASCII, no spaces, of a length worth having."""
        if token is None:
            return None
        value = token.get_secret_value()
        printable = value.isascii() and value.isprintable() and " " not in value
        if not (MIN_TOKEN <= len(value) <= MAX_TOKEN and printable):
            raise ValueError(CHROMA_TOKEN_RULE)
        return token

    @property
    def call_deadline(self) -> float:
        """Seconds one model call may take in all: LLM_CALL_DEADLINE, or a generous default.

        The default lets every attempt use its whole LLM_TIMEOUT, and never drops below
        `MIN_CALL_DEADLINE`: mlx_lm.server loads its weights during the first call.
        """
        if self.llm_call_deadline is not None:
            return self.llm_call_deadline
        return max(MIN_CALL_DEADLINE, self.llm_timeout * (self.llm_max_retries + 1))

    def has_key(self, model_provider: str) -> bool:
        """Whether the key a cloud model provider needs is set (`local` needs none)."""
        variable = PROVIDER_KEYS.get(model_provider)
        return variable is None or getattr(self, variable.lower()) is not None


def read_endpoints() -> Endpoints:
    """The environment-only settings: read once, and again only when the environment changes.

    The one place the environment's endpoints and keys are read; everything else asks here.
    """
    fields = Endpoints.model_fields
    snapshot = tuple(
        sorted(
            (k, v) for k, v in os.environ.items() if k.lower() in fields or k in DATA_HOME_VARIABLES
        )
    )
    return _endpoints_for(snapshot)


@functools.lru_cache(maxsize=8)
def _endpoints_for(snapshot: tuple[tuple[str, str], ...]) -> Endpoints:
    return Endpoints()
