"""`runtime/process.py`'s pause between requests to a provider that asks for one."""

from __future__ import annotations

import threading
import time

import pytest

from deep_research.runtime import process
from tests.support.cli import fresh_python


def test_each_request_reserves_its_start_after_the_one_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(process.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(process, "_provider_next", {})
    assert process.provider_pause("arxiv", 3.0) == 0.0, "the first goes at once"
    assert process.provider_pause("arxiv", 3.0) == 3.0
    assert process.provider_pause("arxiv", 3.0) == 6.0, "queued behind the reserved one"
    assert process.provider_pause("wikipedia", 3.0) == 0.0, "each provider its own"
    now[0] = 110.0
    assert process.provider_pause("arxiv", 3.0) == 0.0, "a pause long past is not waited"


def fresh_signals(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's first-request signals as a new process has them (none set)."""
    monkeypatch.setattr(process, "_model_request_sent", threading.Event())
    monkeypatch.setattr(process, "_model_call_began", threading.Event())
    monkeypatch.setattr(process, "_first_call_at", [0.0])


def test_background_work_waits_for_the_first_model_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """chromadb's import and the relevance model's load start once a request is on the
    wire, not when its call begins (the client still builds it then)."""
    fresh_signals(monkeypatch)
    monkeypatch.setattr(process, "UNSEEN_SEND_WAIT", 60.0)
    process.model_call_began()
    began: list[float] = []
    worker = threading.Thread(
        target=lambda: (process.after_first_model_request(), began.append(time.monotonic()))
    )
    worker.start()
    worker.join(0.3)
    assert worker.is_alive() and not began, "it waits while no request went out"
    sent = time.monotonic()
    process.model_request_sent()
    worker.join(5)
    assert began and began[0] >= sent


def test_with_no_model_request_it_waits_a_bounded_time(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh_signals(monkeypatch)
    monkeypatch.setattr(process, "FIRST_REQUEST_WAIT", 0.05)
    process.after_first_model_request()  # returns: a run that calls no model still opens it


def test_a_call_whose_request_is_not_seen_is_taken_as_sent_a_moment_after_it_began(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A provider's own client (not the endpoint's, runtime/http.py) never says its request
    is written: the work waits `UNSEEN_SEND_WAIT` after the call began, not for ever; a
    request seen on the wire lets it go at once."""
    fresh_signals(monkeypatch)
    monkeypatch.setattr(process, "FIRST_REQUEST_WAIT", 60.0)
    monkeypatch.setattr(process, "UNSEEN_SEND_WAIT", 0.3)
    process.model_call_began()
    start = time.monotonic()
    process.after_first_model_request()
    waited = time.monotonic() - start
    assert 0.25 <= waited < 5, waited
    # Taken as sent from then on: a later run's background work does not wait again.
    assert process.model_request_was_sent()
    start = time.monotonic()
    process.after_first_model_request()
    assert time.monotonic() - start < 0.1


def test_the_unseen_wait_counts_from_when_the_call_began_not_from_the_waiter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fresh_signals(monkeypatch)
    monkeypatch.setattr(process, "UNSEEN_SEND_WAIT", 0.6)
    process.model_call_began()
    time.sleep(0.4)
    process.model_call_began()  # a later call: the first one's start is what counts
    start = time.monotonic()
    process.after_first_model_request()
    assert time.monotonic() - start < 0.45, "counted from the second call, or the waiter"


def test_a_waiter_keeps_the_signals_it_started_with(monkeypatch: pytest.MonkeyPatch) -> None:
    # The graph's import starts a waiter in every process, tests included: one that looked
    # the signals up again later would set a test's fresh ones as "sent".
    fresh_signals(monkeypatch)
    began, sent = process._model_call_began, process._model_request_sent
    monkeypatch.setattr(process, "UNSEEN_SEND_WAIT", 0.2)
    waiter = threading.Thread(target=process.after_first_model_request)
    waiter.start()
    time.sleep(0.1)  # waiting for a call to begin
    fresh_signals(monkeypatch)  # a later test's signals
    process._first_call_at[0] = time.monotonic()
    began.set()
    waiter.join(5)
    assert sent.is_set(), "its own signal: taken as sent when no client said so"
    assert not process._model_request_sent.is_set(), "never the later test's"


def test_the_collectors_first_full_pass_waits_for_the_first_model_request() -> None:
    """The pass that walks the imports' objects (0.13 s on a run's critical path) runs
    once the first request is out, on a thread; the collector then runs as before. Only
    the first run pauses it, and a collector the host paused stays paused."""
    code = (
        "import gc, threading\n"
        "from deep_research.runtime import process\n"
        "process.settle_heap()\n"
        "paused = not gc.isenabled()\n"
        "process.settle_heap()  # a second run: nothing more\n"
        "[settling] = [t for t in threading.enumerate() if t.name == 'gc-settle']\n"
        "process.model_request_sent()\n"
        "settling.join(5)\n"
        "print(paused, gc.isenabled(), not settling.is_alive(), gc.get_freeze_count())\n"
    )
    assert fresh_python(code) == "True True True 0"
    host = (
        "import gc, threading\n"
        "from deep_research.runtime import process\n"
        "gc.disable()\n"
        "process.settle_heap()\n"
        "print(gc.isenabled(), [t.name for t in threading.enumerate() if t.name == 'gc-settle'])\n"
    )
    assert fresh_python(host) == "False []"


def test_the_graph_once_imported_holds_the_collectors_first_pass_for_its_first_run() -> None:
    # From the import's end: the run's own first allocations could otherwise set the pass
    # off on the loop before `new_question` pauses it (0.12 s before the first request).
    code = (
        "import gc, threading\n"
        "import deep_research.graph\n"
        "print(gc.isenabled(), [t.name for t in threading.enumerate() if t.name == 'gc-settle'])\n"
    )
    assert fresh_python(code) == "False ['gc-settle']"


def test_a_process_that_cannot_start_the_thread_keeps_its_collector_running() -> None:
    code = (
        "import gc, threading\n"
        "from deep_research.runtime import process\n"
        "def refused(self):\n"
        '    raise RuntimeError("can\'t start new thread")\n'
        "threading.Thread.start = refused\n"
        "process.settle_heap()\n"
        "print(gc.isenabled())\n"
    )
    assert fresh_python(code) == "True"


def test_a_child_forked_while_the_pass_waits_gets_its_collector_back() -> None:
    code = (
        "import gc, os\n"
        "from deep_research.runtime import process\n"
        "process.settle_heap()\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    os._exit(0 if gc.isenabled() else 1)\n"
        "_, status = os.waitpid(child, 0)\n"
        "print(gc.isenabled(), os.waitstatus_to_exitcode(status))\n"
    )
    assert fresh_python(code) == "False 0"
