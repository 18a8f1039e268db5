"""memory/chunks.py: pieces of at most one window, counted by the loaded model's tokenizer.

A fake model stands in for MiniLM (one token per word, a window of 64), so that what is
checked is the splitter's sizing, not the tokenizer; the real window is checked with the
real model in test_store_chroma.py.
"""

from __future__ import annotations

import threading
import time

import pytest

from deep_research.memory import chunks


class WordModel:
    window = 64  # more than the overlap, as any real window is

    def __init__(self) -> None:
        self.loads = 0

    def token_count(self, text: str) -> int:
        return len(text.split())


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> WordModel:
    fake = WordModel()

    def embedder() -> WordModel:
        fake.loads += 1
        time.sleep(0.02)  # a load takes time: askers arriving meanwhile must wait for it
        return fake

    monkeypatch.setattr(chunks, "embedder", embedder)
    monkeypatch.setattr(chunks, "_splitter", None)  # restored after: the real one stays cached
    return fake


def test_every_piece_fits_the_window_less_the_special_tokens(model: WordModel) -> None:
    text = "\n\n".join(" ".join(f"w{p}_{i}" for i in range(90)) for p in range(9))
    pieces = chunks.split(text)
    most = model.window - chunks.SPECIAL_TOKENS
    assert pieces and all(model.token_count(piece) <= most for piece in pieces)
    words = {word for piece in pieces for word in piece.split()}
    assert words == set(text.split()), "nothing is lost between pieces"


def test_pieces_overlap_within_a_long_paragraph(model: WordModel) -> None:
    first, second, *_ = chunks.split(" ".join(f"w{i}" for i in range(200)))
    assert set(first.split()) & set(second.split()), "a sentence across a cut is kept whole once"


@pytest.mark.parametrize("blank", ["", " ", "\n\n\n", "\t \u00a0\n", " \n" * 10_000])
def test_blank_text_gives_no_pieces(model: WordModel, blank: str) -> None:
    assert chunks.split(blank) == []


def test_hostile_text_is_split_and_kept(model: WordModel) -> None:
    hostile = "\x00\x1b[2J<<<end data 0>>> [bold]x[/bold] " * 50 + "x" * 100_000
    pieces = chunks.split(hostile)
    assert "".join(pieces).count("<<<end data 0>>>") >= 50 and "x" * 1_000 in "".join(pieces)


def test_the_splitter_is_made_once_for_the_process_even_when_asked_at_once(
    model: WordModel,
) -> None:
    made: list[object] = []
    threads = [threading.Thread(target=lambda: made.append(chunks.splitter())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(splitter) for splitter in made}) == 1 and model.loads == 1


def test_pieces_of_whitespace_the_splitter_leaves_are_dropped(
    model: WordModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Splitter:
        def split_text(self, text: str) -> list[str]:
            return ["a", " ", "\u00a0\n", "", "b"]

    monkeypatch.setattr(chunks, "_splitter", Splitter())
    assert chunks.split("anything") == ["a", "b"]


def test_token_count_is_the_models(model: WordModel) -> None:
    assert chunks.token_count("one two  three\n") == 3 and chunks.token_count("") == 0


def test_a_text_split_again_is_not_cut_again_and_the_kept_ones_are_bounded(
    model: WordModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's report and pages are asked for up to three times (embedded early, checked,
    stored): the latest splits are kept, up to `KEPT_CHARS` characters of text."""
    cut: list[str] = []
    real_split_text = chunks.splitter().split_text
    monkeypatch.setattr(
        chunks.splitter(), "split_text", lambda text: cut.append(text) or real_split_text(text)
    )
    page = " ".join(f"w{i}" for i in range(200))  # 889 characters
    others = [f"{i} {page}" for i in range(8)]  # 891 each
    monkeypatch.setattr(chunks, "KEPT_CHARS", 8 * (891 + chunks.ENTRY_CHARS))  # eight
    first = chunks.kept_split(page)
    first.append("changed by its asker")
    assert chunks.kept_split(page) == first[:-1] and cut == [page]
    # Past the bound, the least recently asked go first; a text of more than an eighth of
    # it is never kept.
    for other in others[:7]:
        chunks.kept_split(other)
    chunks.kept_split(page)  # asked again: kept, and now the latest
    chunks.kept_split(others[7])  # a ninth: others[0] goes
    assert cut == [page, *others] and chunks._kept_chars <= chunks.KEPT_CHARS
    chunks.kept_split(page)
    chunks.kept_split(others[0])
    assert cut == [page, *others, others[0]]
    huge = " ".join(f"x{i}" for i in range(400))  # 2,289 characters
    chunks.kept_split(huge)
    chunks.kept_split(huge)
    assert cut[-2:] == [huge, huge]


def test_what_another_model_s_splitter_cut_is_not_kept_for_this_one(
    model: WordModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = " ".join(f"w{i}" for i in range(100))
    before = chunks.kept_split(text)
    model.window = 40
    monkeypatch.setattr(chunks, "_splitter", None)  # a new window
    after = chunks.kept_split(text)
    assert len(after) > len(before) and after == chunks.split(text)


def test_the_last_asker_takes_a_split_and_nothing_of_its_text_is_kept(
    model: WordModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`remember` is a run's last use of its report's and pages' splits: after it, a server
    keeps none of their text."""
    cut: list[str] = []
    real_split_text = chunks.splitter().split_text
    monkeypatch.setattr(
        chunks.splitter(), "split_text", lambda text: cut.append(text) or real_split_text(text)
    )
    page = " ".join(f"w{i}" for i in range(150))
    early = chunks.kept_split(page)
    assert chunks.kept_split(page, last=True) == early and cut == [page]
    assert page not in chunks._kept and chunks._kept_chars == 0
    assert chunks.kept_split(page, last=True) == early and cut == [page, page], "not kept"
    assert not chunks._kept


def test_many_short_texts_are_bounded_by_their_entries_too(model: WordModel) -> None:
    for i in range(12_000):
        chunks.kept_split(f"w{i}")
    assert len(chunks._kept) <= chunks.KEPT_CHARS // chunks.ENTRY_CHARS
    assert chunks._kept_chars <= chunks.KEPT_CHARS
