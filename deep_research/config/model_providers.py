"""Model providers beyond `local:`: which package each needs and which credential.

`provider:model` names any provider that `langchain.chat_models.init_chat_model` knows; the
integration packages are optional extras (`pip install -e ".[anthropic]"`). This table says,
before a run writes anything, what is missing: the package (one `pip install` line) or the
credential (one variable, or the credential chain a provider reads itself). A test keeps
its names equal to the installed `langchain`'s.

Light on purpose (standard library only): `deep-research --help` lists these names.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass

# A credential the integration finds by itself (a chain of files, roles and variables).
AWS_CHAIN = "the AWS credential chain"
AWS_HINT = (
    "AWS credentials (the AWS credential chain: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
    "AWS_PROFILE, ~/.aws or an instance role) and a region (AWS_REGION)"
)
GOOGLE_ADC = "Google application default credentials"


@dataclass(frozen=True)
class Provider:
    """What one `init_chat_model` provider needs before it can answer."""

    module: str  # the integration's importable module
    package: str  # what pip installs
    # Any one of these variables is enough; empty: the provider needs no key (ollama) or
    # reads its own credentials (`chain` says which).
    keys: tuple[str, ...] = ()
    extra: str = ""  # this project's optional extra that brings `langchain` and the package
    chain: str = ""


def _p(module: str, *keys: str, extra: str = "", chain: str = "") -> Provider:
    package = module.split(".")[0].replace("_", "-")
    return Provider(module, package, keys, extra, chain)


# `local` and `openai` are built here without `langchain` (see models.py); the rest go
# through `init_chat_model`.
PROVIDERS: dict[str, Provider] = {
    "openai": _p("langchain_openai", "OPENAI_API_KEY"),
    "anthropic": _p("langchain_anthropic", "ANTHROPIC_API_KEY", extra="anthropic"),
    "anthropic_bedrock": _p("langchain_aws", extra="bedrock", chain=AWS_CHAIN),
    "azure_ai": _p("langchain_azure_ai.chat_models", "AZURE_AI_CREDENTIAL"),
    "azure_openai": _p("langchain_openai", "AZURE_OPENAI_API_KEY"),
    "baseten": _p("langchain_baseten", "BASETEN_API_KEY"),
    "bedrock": _p("langchain_aws", extra="bedrock", chain=AWS_CHAIN),
    "bedrock_converse": _p("langchain_aws", extra="bedrock", chain=AWS_CHAIN),
    "bedrock_mantle_anthropic": _p("langchain_aws", extra="bedrock", chain=AWS_CHAIN),
    "bedrock_mantle_openai": _p("langchain_aws", extra="bedrock", chain=AWS_CHAIN),
    "cohere": _p("langchain_cohere", "COHERE_API_KEY"),
    "deepseek": _p("langchain_deepseek", "DEEPSEEK_API_KEY", extra="deepseek"),
    "fireworks": _p("langchain_fireworks", "FIREWORKS_API_KEY"),
    "google_anthropic_vertex": _p("langchain_google_vertexai.model_garden", chain=GOOGLE_ADC),
    "google_genai": _p(
        "langchain_google_genai", "GOOGLE_API_KEY", "GEMINI_API_KEY", extra="google"
    ),
    "google_vertexai": _p("langchain_google_vertexai", chain=GOOGLE_ADC),
    "groq": _p("langchain_groq", "GROQ_API_KEY", extra="groq"),
    "huggingface": _p(
        "langchain_huggingface", "HUGGINGFACEHUB_API_TOKEN", "HF_TOKEN", extra="huggingface"
    ),
    "ibm": _p("langchain_ibm", "WATSONX_APIKEY", "WATSONX_TOKEN"),
    "langsmith": _p("langchain_openai", "LANGSMITH_API_KEY"),
    "litellm": _p("langchain_litellm", chain="the key variables LiteLLM reads for the model"),
    "meta": _p("langchain_meta", "LLAMA_API_KEY"),
    "mistralai": _p("langchain_mistralai", "MISTRAL_API_KEY", extra="mistral"),
    "nvidia": _p("langchain_nvidia_ai_endpoints", "NVIDIA_API_KEY"),
    "ollama": _p("langchain_ollama", extra="ollama"),
    "openrouter": _p("langchain_openrouter", "OPENROUTER_API_KEY"),
    "perplexity": _p("langchain_perplexity", "PPLX_API_KEY", "PERPLEXITY_API_KEY"),
    "together": _p("langchain_together", "TOGETHER_API_KEY"),
    "upstage": _p("langchain_upstage", "UPSTAGE_API_KEY"),
    "xai": _p("langchain_xai", "XAI_API_KEY", extra="xai"),
}


def install_hint(provider: str) -> str:
    """The one command that makes `provider` usable."""
    entry = PROVIDERS[provider]
    if entry.extra:
        return f'pip install -e ".[{entry.extra}]"'
    return f"pip install langchain {entry.package}"


def missing_package(provider: str) -> str | None:
    """The package `provider` needs that is not installed, or None (`local` needs none)."""
    entry = PROVIDERS.get(provider)
    if entry is None:
        return None
    needed = [entry.module] if provider == "openai" else ["langchain", entry.module]
    for module in needed:
        if not _installed(module):
            return "langchain" if module == "langchain" else entry.package
    return None


def missing_credential(provider: str, environ: Mapping[str, str] | None = None) -> str | None:
    """What credential `provider` lacks, said in a few words, or None when it has one.

    AWS providers ask botocore's credential chain (installed with langchain-aws), which
    also finds profiles, SSO and instance roles. Other chains (Google, LiteLLM) hold files
    and roles only their integration resolves: an unusable one shows as the first model
    call's error instead.
    """
    entry = PROVIDERS.get(provider)
    if entry is not None and entry.chain == AWS_CHAIN:
        return None if _aws_credentials() else AWS_HINT
    if entry is None or not entry.keys:
        return None
    env = os.environ if environ is None else environ
    if any(env.get(name, "").strip() for name in entry.keys):
        return None
    return " or ".join(entry.keys)


def credential_text(provider: str) -> str:
    """What `provider` authenticates with, for docs and doctor: a variable, a chain, none."""
    entry = PROVIDERS[provider]
    if entry.keys:
        return " or ".join(entry.keys)
    return entry.chain or "none"


def _aws_credentials() -> bool:
    try:
        import botocore.session  # type: ignore[import-not-found]  # only with langchain-aws
    except ImportError:
        return False
    return botocore.session.get_session().get_credentials() is not None


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken install
        return False
