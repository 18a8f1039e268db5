"""Everything that lives as long as the process: held here, or listed here with why it is
safe to keep beside its code.

No cap or counter lives here: searches, turns and todo updates are counted in checkpointed
graph state, so a resume in another process, `max_concurrency=1` and concurrent threads
see the same numbers. What remains is either a cost saver (models, clients, caches) whose
loss only costs time, or a marker that is only ever compared with itself in this process.
`tests/unit/runtime/test_process_globals.py` fails for a module-level global (a mutable
container, a lock or thread, a `global` statement, a cached function) named nowhere here.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
import weakref
from collections import OrderedDict

# The steps that send paid calls (a model turn, a search step), by run and scope, each with
# the token the step before it handed over: the id of the last message it left. A sending
# step starts "fresh" only on a token a step of this process handed it, once. Any other
# start is a re-run after a stop (a crash, SIGKILL, Ctrl-C, a dead server instance): its
# calls that have no saved answer may have been sent, and billed, before the stop, so they
# are counted at their worst case before anything is sent again (runtime/durable.py keeps
# the answered ones). A lost entry (a new process) only makes a step count one call more.
_handed: OrderedDict[tuple[str, str], str] = OrderedDict()
MAX_HANDED = 10_000


def hand_over(scope: tuple[str, str], token: str) -> None:
    """Tell the next sending step of `scope` (thread, researcher) that it starts fresh on
    `token` (the id of the last message this step leaves in state)."""
    _handed[scope] = token
    _handed.move_to_end(scope)
    while len(_handed) > MAX_HANDED:
        _handed.popitem(last=False)


def take_over(scope: tuple[str, str], token: str) -> bool:
    """Whether a sending step of `scope` starts fresh on `token`; True at most once."""
    return _handed.pop(scope, None) == token


# What the search steps that started in this process let go out, by scope and the token
# they started on: a step that runs again here (a sibling's outage cancelled it, or a
# notebook resumed it) knows exactly which of its searches may have been billed, and sends
# the others. A step that ran in another process has no entry: all its unanswered
# searches may have gone out. Keys are the searches' cache keys; the oldest steps go first.
_sent: OrderedDict[tuple[tuple[str, str], str], set[str]] = OrderedDict()


def sent_by_step(scope: tuple[str, str], token: str, fresh: bool) -> set[str] | None:
    """The set a search step adds each search to before it is sent: a new one for a fresh
    start; for a start again, the one its earlier start here filled, or None (elsewhere)."""
    key = (scope, token)
    if fresh:
        _sent[key] = set()
    elif key not in _sent:
        return None
    _sent.move_to_end(key)
    while len(_sent) > MAX_HANDED:
        _sent.popitem(last=False)
    return _sent[key]


# How many researchers of one orchestrator turn run at once (`max_researchers_per_turn`).
# Keyed by the turn's dispatch id; an entry goes when its last researcher lets go. Losing
# one (a new process after a crash) only changes how many run together, never a count.
_turn_slots: weakref.WeakValueDictionary[str, asyncio.Semaphore] = weakref.WeakValueDictionary()


def turn_slots(dispatch_id: str, size: int) -> asyncio.Semaphore:
    """The semaphore shared by the research tasks of one orchestrator turn."""
    slots = _turn_slots.get(dispatch_id)
    if slots is None:
        slots = asyncio.Semaphore(size)
        _turn_slots[dispatch_id] = slots
    return slots


# Set once a model request of this process is on the wire. Background work that would take
# the interpreter from a run's first steps (chromadb's import for memory, the relevance
# model's load, the collector's first full pass) waits for it, and then runs while the run
# waits for its model. The model endpoint's own client sets it when a request's last byte is
# written (runtime/http.py); a provider's client that this code cannot watch is taken to
# have sent its request `UNSEEN_SEND_WAIT` seconds after the call began (llm/sending.py).
# No model called at all: the work starts after `FIRST_REQUEST_WAIT` seconds.
_model_request_sent = threading.Event()
_model_call_began = threading.Event()
_first_call_at = [0.0]  # when the process's first model call began (time.monotonic)
FIRST_REQUEST_WAIT = 5.0
UNSEEN_SEND_WAIT = 0.5


def model_call_began() -> None:
    """A model call is being sent (llm/sending.py, before each call)."""
    if not _model_call_began.is_set():
        _first_call_at[0] = time.monotonic()
        _model_call_began.set()


def model_request_sent() -> None:
    """A model request is on the wire (runtime/http.py)."""
    _model_request_sent.set()
    _model_call_began.set()  # a thread waiting for a call to begin stops waiting too


def model_request_was_sent() -> bool:
    return _model_request_sent.is_set()


def after_first_model_request() -> None:
    """Block this (background) thread until a model request is on the wire: at most until
    `UNSEEN_SEND_WAIT` seconds after the first call began, `FIRST_REQUEST_WAIT` if none did.

    Until its request is written, a first call still builds its client, imports what the
    client needs on first use and asks the OS what platform it runs on (openai's headers):
    0.1-0.3 s on busy cores. Work started before then (the collector's pass held the
    interpreter 0.2 s) delayed the first request by as much."""
    sent, began = _model_request_sent, _model_call_began  # the ones there as it starts
    if sent.is_set() or not began.wait(FIRST_REQUEST_WAIT):
        return
    left = _first_call_at[0] + UNSEEN_SEND_WAIT - time.monotonic()
    if not sent.wait(max(0.0, left)):
        sent.set()  # a client this code cannot watch: taken as sent by now


# Taken by the first call that defers the collector's first full pass (`settle_heap`, as
# the graph is imported); never released. `_heap_paused` is set while that pass waits.
_heap_settling = threading.Lock()
_heap_paused = threading.Event()


def settle_heap() -> None:
    """Once per process, as the graph is imported (graph.py): the cyclic collector's first
    full pass after the imports is moved from the first run's first steps to its first
    model call's wait.

    That pass walks every object the imports made (about a million): it came 0.15 s into a
    run, before the orchestrator's first request, and took 0.13 s (0.3 s with the cores
    busy); `python -m benchmarks` listed it as the gap before the first call. The collector
    is paused now, and a daemon thread runs the full pass once a model request is out (or
    when no call began within `FIRST_REQUEST_WAIT` seconds: a server idle after its
    import), then lets the collector run as before; the next full pass waits until the
    objects that survived it have grown by a quarter. A collector the host paused before
    the graph's import stays paused (one it pauses during those seconds is resumed with
    the pass); a child forked meanwhile gets its collector back at once."""
    if not _heap_settling.acquire(blocking=False):
        return
    if not gc.isenabled():
        return
    gc.disable()
    _heap_paused.set()
    try:
        threading.Thread(target=_collect_after_first_request, name="gc-settle", daemon=True).start()
    except RuntimeError:  # no thread to be had (a container's limit): as before, at once
        _resume_collector()


def _collect_after_first_request() -> None:
    try:
        after_first_model_request()
        gc.collect()  # before the collector is back: the loop's next allocation could
    finally:  # otherwise start the same pass on the loop first
        _resume_collector()


def _resume_collector() -> None:
    if _heap_paused.is_set():
        _heap_paused.clear()
        gc.enable()


os.register_at_fork(after_in_child=_resume_collector)  # the pass's thread is not forked


# One semaphore per search provider name, so parallel researchers (and threads) share the
# provider's limit (`search/chain.py`); losing it only changes how many searches run at
# once. Semaphores belong to one event loop: a new loop (a new test) gets new ones.
_provider_slots: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Semaphore]] = {}


def provider_slots(name: str, size: int) -> asyncio.Semaphore:
    """The semaphore every search sent to provider `name` in this event loop waits on."""
    loop = asyncio.get_running_loop()
    owner, slots = _provider_slots.get(name, (None, None))
    if owner is not loop or slots is None:
        slots = asyncio.Semaphore(size)
        _provider_slots[name] = (loop, slots)
    return slots


# When this process next may send a request to each provider that asks for a pause
# between requests (arXiv: 3 s, `search/chain.py`): each request reserves its start, so
# researchers and threads queue behind one another. Losing it lets one request go sooner.
_provider_next: dict[str, float] = {}


def provider_pause(name: str, interval: float) -> float:
    """Seconds to wait before this request to provider `name`, which asks `interval`
    seconds between request starts; the start is reserved by this call."""
    now = time.monotonic()
    start = max(now, _provider_next.get(name, now))
    _provider_next[name] = start + interval
    return start - now


# Kept beside their code, each for the reason given (they hold objects of a package above
# this one, or sit below it in the layers, so they cannot move here):
#
# Configuration (below `runtime`: it cannot import this module)
# - `config.envfile._loaded`, `config.envfile._origin`, `config.envfile._read`,
#   `config.envfile._refused`, `config.envfile._unkeyed`: the nearest `.env` and the user's
#   are read into `os.environ` once; `_origin` remembers which file set which variable, for
#   error text, `_read` which files were read, `_refused` which program-naming variables a
#   project's `.env` set and were ignored, and `_unkeyed` which endpoints it set without
#   their keys and were ignored, for `doctor`. They only grow once, at the first
#   `load_once()`.
# - `config.endpoints._endpoints_for`: `Endpoints` per snapshot of the environment (8 kept);
#   a changed environment is a new snapshot, so a cached value is never stale.
# - `text.secrets._redactor_for`: the same, for the secrets the redactor hides.
#
# Models and clients (cost savers: losing one costs a reload, never a result)
# - `llm.spending._schemas`: each tool class's JSON schema while the class lives (weakly
#   keyed); a class's schema never changes once it is made.
# - `embedding.loader._model`, `embedding.loader._model_lock`: the MiniLM model, ~90 MB of
#   weights mapped once and read-only afterwards; the lock makes one load of it. Its cache
#   of recent vectors and its batching thread are attributes of that one model
#   (`embedding/minilm.py`), shared the same way and keyed by the text they embed.
# - `embedding.loader._weights`, `embedding.loader._weights_lock`: where the model's files
#   are, found (or downloaded) and checked against their SHA-256 once.
# - `embedding.loader._warming`, `embedding.loader._warming_lock`: the daemon thread that
#   loads the model while the first model calls run (`warm_up`), started at most once.
# - `embedding.parts._quota`: the CPUs this process's cgroup quota allows, read once (a
#   quota changed while running is read by the next process; until then a pass may be cut
#   in more parts than the quota runs at once, which costs time, never a result).
# - `embedding.native._calls`: the calls into onnxruntime or tokenizers under way,
#   so the process's exit stops and waits for them (a daemon thread inside one as the interpreter
#   finalizes aborts the process); a forked child starts with none.
# - `memory.chunks._splitter`, `memory.chunks._splitter_lock`: the token-aware splitter,
#   built from the model once; it holds no text between calls.
# - `memory.chunks._kept`, `memory.chunks._kept_by`, `memory.chunks._kept_chars`,
#   `memory.chunks._kept_lock`: a run's report and cited pages split into chunks, kept from
#   memory's early work (memory/preparing.py) until `remember` takes them. What it does
#   not take (a run that ended before it, a part the citation check changed, a page the
#   final report does not cite, a split that finished after it) stays, in plain text,
#   never written anywhere, until newer splits push it out: at
#   most `KEPT_CHARS` characters, dropped when the splitter changes. Losing them costs a
#   split, never a result.
# - `llm.slots._gates`: one `SlotGate` per model endpoint and event loop, holding what the
#   calls' timing said (one request at a time or not) and whose turn it is; losing it only
#   changes the order a server answers in, and a new process finds it out again.
# - `runtime.http._by_loop`, `runtime.http._lock`, `runtime.http._sync_client`,
#   `runtime.http._built_tls_context`, `runtime.http._tls_lock`, `runtime.http._tls_started`:
#   one HTTP client per event loop and timeout (an entry goes with its loop), and the TLS
#   context built once from the environment's CA bundle (on a thread as the first run
#   starts: `prepare_tls`).
# - `runtime.prompts._read`: the prompt files, read once; they do not change while running.
# - `researcher.sources._tool`: the researcher's search tool, a model class per set of
#   sources a run offers (at most `MAX_TOOLS`); losing one costs its making again, 1-2 ms.
# - `export.html._parser`: the export's markdown-it parser, configured once; parsing keeps
#   nothing in it between reports.
# - `search.fetch._extractors`: the page extraction threads, a pool of its own made on the
#   first page.
# - `search.pdf_room._room`: the bytes PDFs being read may hold past a page's cap, reserved
#   before each download and given back once its text is extracted; every run of the
#   process shares it, as they share its memory. A new process starts with it whole.
#
# Stores and caches of what a run found
# - `memory.open._stores`, `memory.open._locks`, `memory.open._open_lock`: one Chroma
#   client per location, and the directory lock this process holds on it until it ends or
#   `close_stores` (a second client on one directory would corrupt it).
# - `memory.open._damaged`: a store found damaged gives its first, readable error again
#   rather than each open trying again, until `close_stores`.
# - `memory.open._leases`: this process's lease (an open descriptor on the lease file) on each
#   shared memory server it attached to, held as `_locks` are; the kernel drops it when the
#   process ends, so a lost one can only let an idle server stop sooner.
# - `memory.open._closes`: how many times `close_stores` ran, so an open a background thread
#   began before one is refused; losing it (a new process) loses no store either.
# - `memory.open._said`: directories whose sharing failed, so the reason is said once;
#   losing it says it once more.
# - `memory.open._unreachable`: a Chroma server that did not answer, by thread, for an hour
#   at most: losing it costs one more bounded attempt, never a result.
# - `search.cache._runs`: the per-thread search and page cache (`MAX_RUNS` kept); a hit
#   saves a search or a fetch and is never counted as one, and a process that lost it
#   searches again and counts it.
