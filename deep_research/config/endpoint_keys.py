"""Which secrets each endpoint setting is sent with: what a project's `.env` may not redirect.

A project's `.env` comes with a folder (a cloned repository). One that sets an endpoint
(`LLM_BASE_URL`) while the key sent there (`LLM_API_KEY`) comes from elsewhere, the
process environment or the user's own `.env`, would send the user's key to a server of the
file's author's choosing. `envfile` ignores such an endpoint with a warning; this module
is the rule, as data: `ENDPOINT_SECRETS` pairs each endpoint with the secrets sent to it,
`KEYLESS` names the endpoint-shaped settings sent no secret, and an endpoint-shaped name in
neither (a provider integration's own, e.g. `GROQ_API_BASE`) is paired with the secrets
that share its first word (`GROQ_API_KEY`). Loopback is no exception: a key sent to
127.0.0.1 reaches whatever process listens there. Standard library only, like `envfile`.
"""

from __future__ import annotations

import re
from collections.abc import Set

from deep_research.text.secrets import SECRET_ENV

# Every request passes through a proxy, and a CA bundle decides whom TLS trusts: every
# secret is sent through them.
EVERY_SECRET: tuple[str, ...] = ("*",)
_LANGSMITH_KEYS = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
_HF_TOKENS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACEHUB_API_TOKEN")

# Endpoint variable -> the secret variables whose values are sent to it.
ENDPOINT_SECRETS: dict[str, tuple[str, ...]] = {
    # The agent's own (config/endpoints.py, config/agent_server.py).
    "LLM_BASE_URL": ("LLM_API_KEY",),
    "TAVILY_API_BASE_URL": ("TAVILY_API_KEY",),
    "CHROMA_HOST": ("CHROMA_TOKEN",),
    "CHROMA_PORT": ("CHROMA_TOKEN",),
    "DEEP_RESEARCH_AGENT_URL": ("DEEP_RESEARCH_SERVER_TOKEN",),
    # PostgreSQL: the checkpoints' and the Agent Server's (docs/distributed.md). A URL
    # without a password is sent libpq's PGPASSWORD; the server's parts, POSTGRES_PASSWORD.
    "DEEP_RESEARCH_CHECKPOINTS": ("PGPASSWORD",),
    "DATABASE_URL": ("PGPASSWORD",),
    "PGHOST": ("PGPASSWORD",),
    "PGHOSTADDR": ("PGPASSWORD",),
    "PGPORT": ("PGPASSWORD",),
    "POSTGRES_HOST": ("POSTGRES_PASSWORD",),
    "POSTGRES_PORT": ("POSTGRES_PASSWORD",),
    # The model providers' integrations (config/model_providers.py), as they read them.
    "OPENAI_BASE_URL": ("OPENAI_API_KEY",),
    "OPENAI_API_BASE": ("OPENAI_API_KEY",),
    "OPENAI_PROXY": ("OPENAI_API_KEY",),
    "ANTHROPIC_BASE_URL": ("ANTHROPIC_API_KEY",),
    "ANTHROPIC_API_URL": ("ANTHROPIC_API_KEY",),
    "ANTHROPIC_PROXY": ("ANTHROPIC_API_KEY",),
    "CO_API_URL": ("COHERE_API_KEY", "CO_API_KEY"),
    "HF_ENDPOINT": _HF_TOKENS,  # the embedding model's download, and `huggingface`
    # LangSmith tracing (its client reads both prefixes).
    "LANGSMITH_ENDPOINT": _LANGSMITH_KEYS,
    "LANGCHAIN_ENDPOINT": _LANGSMITH_KEYS,
    "LANGSMITH_RUNS_ENDPOINTS": _LANGSMITH_KEYS,
    # Every HTTP client's (httpx and requests read them).
    "HTTP_PROXY": EVERY_SECRET,
    "HTTPS_PROXY": EVERY_SECRET,
    "ALL_PROXY": EVERY_SECRET,
    "SSL_CERT_FILE": EVERY_SECRET,
    "SSL_CERT_DIR": EVERY_SECRET,
    "REQUESTS_CA_BUNDLE": EVERY_SECRET,
    "CURL_CA_BUNDLE": EVERY_SECRET,
}

# Endpoint-shaped settings sent no secret from elsewhere: the keyless scholarly and
# encyclopedic APIs, SearXNG and Ollama (no key), a proxy exception list, and URLs that hold
# their own credentials (a project's `.env` that sets one sets its password too).
KEYLESS = frozenset(
    {
        "REDIS_URL",
        "ARXIV_API_URL",
        "WIKIPEDIA_API_URL",
        "OPENALEX_API_URL",
        "EUROPEPMC_API_URL",
        "SEARXNG_URL",
        "OLLAMA_HOST",
        "NO_PROXY",
    }
)

# What an endpoint variable's name looks like (pydantic-settings reads names in any case).
ENDPOINT_SHAPE = re.compile(
    r"(_BASE_URL|_API_BASE|_API_URL|_ENDPOINT|_ENDPOINTS|_ENDPOINT_URL|_URL|_HOST|_PORT|_PROXY)$",
    re.I,
)


def is_endpoint(name: str) -> bool:
    """Whether the variable `name` says where requests go (in the table, or shaped so)."""
    upper = name.upper()
    return upper in ENDPOINT_SECRETS or bool(ENDPOINT_SHAPE.search(upper))


def secrets_sent(endpoint: str, elsewhere: Set[str]) -> list[str]:
    """The secrets among `elsewhere` (upper-cased names of variables set outside the file
    that sets `endpoint`) that would be sent to `endpoint`: none means it may be used."""
    name = endpoint.upper()
    if name in KEYLESS:
        return []
    paired = ENDPOINT_SECRETS.get(name)
    if paired == EVERY_SECRET:
        return sorted(n for n in elsewhere if SECRET_ENV.search(n))
    if paired is not None:
        return [n for n in paired if n in elsewhere]
    if not ENDPOINT_SHAPE.search(name):
        return []
    prefix = name.split("_", 1)[0] + "_"
    return sorted(n for n in elsewhere if n.startswith(prefix) and SECRET_ENV.search(n))
