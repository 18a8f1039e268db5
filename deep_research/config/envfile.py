"""Reading `.env`: the nearest one from the working directory upward, then the user's own.

Every entry point (the CLI, `import deep_research` for the Python API and notebooks) calls
`load_once()`, so everything that reads the environment sees `.env` the same way. The order,
first wins: the process environment, the nearest `.env` from the working directory upward
(the project's), then the user's `.env` in their config directory
(`~/.config/deep-research/.env` on Linux), which follows the user into every folder. Empty
values mean unset; the files are read once per process. A project's `.env` comes with the
folder (a cloned repository), so it may not name a program to run (`names_a_program`):
those are taken from the process environment or the user's own `.env` only. Nor may it set
an endpoint whose key comes from elsewhere (`endpoint_keys`): the user's key would go to a
server of the file's author's choosing. This module imports python-dotenv only (and
platformdirs off Linux, for the user's file): it must stay cheap to import.
"""

from __future__ import annotations

import io
import logging
import os
import re
import sys
from collections.abc import Iterable, MutableMapping
from pathlib import Path

from dotenv import dotenv_values, find_dotenv
from dotenv.parser import parse_stream

from deep_research.config import endpoint_keys

OPT_OUT = "DEEP_RESEARCH_DOTENV"
_OFF = {"0", "false", "no", "off"}

APP_NAME = "deep-research"  # the folder named after the app in the user's config directory

# Variables that choose a program to run, or code a child process loads: the agent's own
# (MCP_SERVERS_FILE's stdio commands, RENDER_BROWSER, the plan editor) and the platform's.
# Cloud SDKs' credential files run what they name (`credential_process`, an executable
# source), and their endpoints are sent credentials read from the user's own files.
PROGRAM_SETTINGS = frozenset(
    {"MCP_SERVERS_FILE", "RENDER_BROWSER", "EDITOR", "VISUAL", "PATH", "BASH_ENV", "ENV"}
    | {"AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "GOOGLE_APPLICATION_CREDENTIALS"}
    | {"GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES", "SSLKEYLOGFILE"}
)
PROGRAM_PREFIXES = ("LD_", "DYLD_", "PYTHON", "NODE_", "PLAYWRIGHT_", "AWS_ENDPOINT_URL")
# What a project's value may read from outside its file (`${HOME}/data`): nothing secret.
HARMLESS_REFERENCES = frozenset({"HOME", "USER", "LOGNAME", "PWD", "TMPDIR", "TEMP", "TMP"})

# What python-dotenv interpolates in a value: `${NAME}` or `${NAME:-default}`.
REFERENCE = re.compile(r"\$\{([^}:]+)(?::-[^}]*)?\}")

log = logging.getLogger(__name__)
_loaded = False
# The `.env` files read, nearest first.
_read: list[Path] = []
# Variable name -> the `.env` it came from and its value there, so errors can say where a
# bad value was set.
_origin: dict[str, tuple[Path, str]] = {}
# Program-naming variables a project's `.env` set and this process ignored, for `doctor`.
_refused: list[str] = []
# Endpoints a project's `.env` set while their key came from elsewhere, ignored, each with
# the keys it would have been sent (for `doctor`).
_unkeyed: list[tuple[str, list[str]]] = []


def disabled() -> bool:
    """Whether `DEEP_RESEARCH_DOTENV` switches reading `.env` off."""
    return os.environ.get(OPT_OUT, "").strip().lower() in _OFF


def user_env_path() -> Path:
    """The user's own `.env`, read from every folder below the project's: in platformdirs'
    `user_config_dir`, worked out without importing it on Linux (it costs `--help` ~20 ms)."""
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_CONFIG_HOME", "").strip() or os.path.expanduser("~/.config")
        return Path(base) / APP_NAME / ".env"
    import platformdirs

    return platformdirs.user_config_path(APP_NAME) / ".env"


def load_once() -> list[Path]:
    """Load the nearest `.env`, then the user's, into `os.environ` the first time this is
    called; the files read (none on later calls)."""
    global _loaded
    if _loaded or disabled():
        return []
    _loaded = True
    found = find_dotenv(usecwd=True)
    user = user_env_path()
    # The user's file is read after the project's, but its keys count as from elsewhere.
    values = _values(user, warn=False) if user.is_file() else None
    later = [name for name, value in (values or {}).items() if value]
    for path in ([Path(found)] if found else []) + [user]:
        if not path.is_file() or any(_same(path, seen) for seen in _read):
            continue
        project = not _same(path, user)
        names = load(path, os.environ, project=project, later=later if project else ())
        if names is not None:
            _read.append(path)
            _origin.update({name: (path, os.environ[name]) for name in names})
    return list(_read)


def files_read() -> list[Path]:
    """The `.env` files this process read, nearest first (for `doctor`)."""
    return list(_read)


def refused() -> list[str]:
    """The variables a project's `.env` named a program with, ignored (for `doctor`)."""
    return list(_refused)


def unkeyed() -> list[tuple[str, list[str]]]:
    """The endpoints a project's `.env` set, ignored as their key came from elsewhere, each
    with those keys' names (for `doctor`)."""
    return [(name, list(keys)) for name, keys in _unkeyed]


def source_of(name: str) -> str:
    """Where the environment variable `name` was set, for error messages."""
    path, value = _origin.get(name, (None, None))
    if path is not None and os.environ.get(name) == value:
        return f"{name} in {path}"
    return f"environment variable {name}"


def names_a_program(name: str) -> bool:
    """Whether the variable `name` chooses a program to run (a project's `.env` may not)."""
    upper = name.upper()
    return upper in PROGRAM_SETTINGS or upper.startswith(PROGRAM_PREFIXES)


def load(
    path: Path,
    environ: MutableMapping[str, str],
    *,
    project: bool = False,
    later: Iterable[str] = (),
) -> list[str] | None:
    """Set the variables of `path` that `environ` lacks; the names set, in file order, or
    None when the file cannot be read. A `project` file's program-naming variables are
    refused with a warning, and so are its endpoints whose key is set elsewhere (in
    `environ`, or in `later`: the names a file read after this one sets) and its values
    that copy such a key in (`${OPENAI_API_KEY}`)."""
    values = _values(path)
    if values is None:
        return None
    raw = (_values(path, warn=False, interpolate=False) or {}) if project else {}
    own = {name.upper() for name, value in values.items() if value}
    elsewhere = {name.upper() for name, value in environ.items() if value}
    elsewhere |= {name.upper() for name in later} - own
    # Settings are read in any case: `Llm_Api_Key` here is the environment's LLM_API_KEY.
    present = {name.upper() for name in environ}
    added = []
    for name, value in values.items():
        # `KEY=` (as in .env.example) means unset, as pydantic-settings reads it; a variable
        # the process already has, in any case, wins over the file.
        if value is None or value == "" or name.upper() in present:
            continue
        if project and names_a_program(name):
            _refuse(name, path)
            continue
        if project and (keys := endpoint_keys.secrets_sent(name, elsewhere)):
            _refuse_endpoint(name, keys, path)
            continue
        if project and (keys := _secrets_copied(raw.get(name) or "", elsewhere)):
            _refuse_copy(name, keys, path)
            continue
        environ[name] = value
        present.add(name.upper())
        added.append(name)
    return added


def _secrets_copied(raw: str, elsewhere: set[str]) -> list[str]:
    """The variables set `elsewhere` that the uninterpolated value `raw` copies in: any but
    a few harmless ones, since a database URL or a proxy's may hold a password too."""
    names = dict.fromkeys(match.strip().upper() for match in REFERENCE.findall(raw))
    return [name for name in names if name in elsewhere and name not in HARMLESS_REFERENCES]


def _values(
    path: Path, *, warn: bool = True, interpolate: bool = True
) -> dict[str, str | None] | None:
    """The variables `path` sets, or None when it cannot be read (said, if `warn`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        if warn:
            log.warning("ignored %s: cannot read it (%s)", path, type(error).__name__)
        return None
    if warn:
        _warn_unparsable(path, text)
    dotenv_log = logging.getLogger("dotenv.main")
    # python-dotenv logs one line per bad statement; `_warn_unparsable` said it once.
    quiet = _DropAll()
    dotenv_log.addFilter(quiet)
    try:
        return dotenv_values(stream=io.StringIO(text), interpolate=interpolate)
    finally:
        dotenv_log.removeFilter(quiet)


def _refuse(name: str, path: Path) -> None:
    shown = _shown(name)
    _refused.append(shown)
    _ignored(shown, path, "name a program to run", "it")


def _refuse_endpoint(name: str, keys: list[str], path: Path) -> None:
    shown = _shown(name)
    _unkeyed.append((shown, keys))
    # Names only, never values: the key's, and the endpoint's (a URL may hold a password).
    why = f"send {' or '.join(keys)}, set elsewhere, to an endpoint of its own"
    _ignored(shown, path, why, shown, f", or {' and '.join(keys)} in {path} too")


def _refuse_copy(name: str, keys: list[str], path: Path) -> None:
    shown = _shown(name)
    _unkeyed.append((shown, keys))
    _ignored(shown, path, f"copy {' or '.join(keys)}, set elsewhere, into its own settings", shown)


def _shown(name: str) -> str:
    """A setting's name as a warning may show it (its value never is: it may be a secret)."""
    return name if name.isprintable() else ascii(name)


def _ignored(shown: str, path: Path, why: str, subject: str, also: str = "") -> None:
    log.warning(
        "ignored %s in %s: a project's .env may not %s; set %s in the environment or in your "
        "own %s%s",
        shown,
        path,
        why,
        subject,
        user_env_path(),
        also,
    )


def _same(one: Path, other: Path) -> bool:
    try:
        return one.samefile(other)
    except OSError:
        return False


def _warn_unparsable(path: Path, text: str) -> None:
    lines = [str(b.original.line) for b in parse_stream(io.StringIO(text)) if b.error]
    if lines:
        # Line numbers only: the content of a bad line may be a secret.
        noun = "line" if len(lines) == 1 else "lines"
        log.warning("ignored %s %s of %s: not NAME=value", noun, ", ".join(lines), path)


class _DropAll(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False
