"""Text-fragment links (`#:~:text=[prefix-,]start[,end][,-suffix]`, WICG scroll-to-text).

Everything is matched the way a browser would find it, only more forgiving about
typography: whitespace runs, letter case, curly vs straight quotes and dash variants are
normalised on both sides. Terms must sit on word boundaries, as in the spec.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property
from urllib.parse import quote, unquote

from deep_research.errors import DeepResearchError

# A passage this short is cited whole; a longer one by its first and last few words,
# which survives small edits to the middle of the page.
EXACT_WORDS = 8
TERM_WORDS = 3
MAX_CONTEXT_WORDS = 3

_FOLD = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u00ad": None,
        "\u200b": None,
    }
)
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|\u2026)\s*")
_QUOTE_TRIM = " \t\n\"'\u201c\u201d\u2018\u2019.,;:"


class FragmentError(DeepResearchError, ValueError):
    """A text directive that the spec's grammar does not allow."""


@dataclass(frozen=True)
class TextDirective:
    """One `text=` directive, with its terms decoded."""

    start: str
    end: str = ""
    prefix: str = ""
    suffix: str = ""

    def encode(self) -> str:
        terms = [f"{_encode(self.prefix)}-"] if self.prefix else []
        terms.append(_encode(self.start))
        if self.end:
            terms.append(_encode(self.end))
        if self.suffix:
            terms.append(f"-{_encode(self.suffix)}")
        return "text=" + ",".join(terms)


def _encode(term: str) -> str:
    # `quote` escapes ',' and '&' but leaves '-' (a directive delimiter) and '~' alone.
    return quote(term, safe="").replace("-", "%2D").replace("~", "%7E")


def fragment_of(directives: list[TextDirective]) -> str:
    """The fragment directive (without '#') for one or more text directives."""
    return ":~:" + "&".join(d.encode() for d in directives)


def parse_directives(directive_part: str) -> list[TextDirective]:
    """Text directives from the part of a fragment after `:~:`; other directives are ignored."""
    found = []
    for item in directive_part.split("&"):
        name, sep, value = item.partition("=")
        if name == "text" and sep:
            found.append(_parse_text(value))
    return found


def _parse_text(value: str) -> TextDirective:
    raw = value.split(",")
    prefix = suffix = ""
    if len(raw) > 1 and raw[0].endswith("-"):
        prefix = unquote(raw.pop(0)[:-1])
    if len(raw) > 1 and raw[-1].startswith("-"):
        suffix = unquote(raw.pop()[1:])
    if not 1 <= len(raw) <= 2 or any(not term or term.startswith("-") for term in raw):
        raise FragmentError(f"not a text directive: text={value}")
    terms = [unquote(term) for term in raw]
    return TextDirective(
        start=terms[0], end=terms[1] if len(terms) == 2 else "", prefix=prefix, suffix=suffix
    )


def directive_from_quote(passage: str) -> TextDirective | None:
    """A quoted passage as a directive; "first words ... last words" becomes start,end."""
    parts = [p.strip(_QUOTE_TRIM) for p in _ELLIPSIS.split(passage)]
    parts = [p for p in parts if p]
    if not parts:
        return None
    return TextDirective(start=parts[0], end=parts[-1] if len(parts) > 1 else "")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).translate(_FOLD).casefold()


def _normalise_term(term: str) -> str:
    return " ".join(_fold(term).split())


def _is_word_char(char: str) -> bool:
    # CJK scripts have no spaces between words: any position there is a boundary.
    return char.isalnum() and ord(char) < 0x2E80


class RetrievedText:
    """Retrieved text, normalised once, that directives are matched against and built from."""

    def __init__(self, text: str) -> None:
        self.text = unicodedata.normalize("NFC", text)

    @cached_property
    def _normalised(self) -> tuple[str, list[int]]:
        """Normalised text, and for each of its characters the index it came from."""
        chars: list[str] = []
        origin: list[int] = []
        space_pending = False
        for index, char in enumerate(self.text):
            if char.isspace():
                space_pending = bool(chars)
                continue
            if space_pending:
                chars.append(" ")
                origin.append(index)
                space_pending = False
            for folded in char.translate(_FOLD).casefold():
                chars.append(folded)
                origin.append(index)
        return "".join(chars), origin

    @property
    def normalised(self) -> str:
        return self._normalised[0]

    def _bounded(self, start: int, end: int) -> bool:
        """Whether [start, end) begins and ends on word boundaries, as the spec requires."""
        return self._boundary(start) and self._boundary(end)

    def _boundary(self, position: int) -> bool:
        norm = self.normalised
        if position in (0, len(norm)):
            return True
        return not (_is_word_char(norm[position - 1]) and _is_word_char(norm[position]))

    def _occurrences(self, term: str, start: int = 0) -> list[int]:
        norm, found = self.normalised, []
        position = norm.find(term, start)
        while position != -1 and term:
            if self._bounded(position, position + len(term)):
                found.append(position)
            position = norm.find(term, position + 1)
        return found

    def locate(self, directive: TextDirective) -> tuple[int, int] | None:
        """The first match of `directive`, as a span of the normalised text, or None."""
        start, end = _normalise_term(directive.start), _normalise_term(directive.end)
        prefix, suffix = _normalise_term(directive.prefix), _normalise_term(directive.suffix)
        for position in self._occurrences(start):
            if prefix and not self._preceded_by(position, prefix):
                continue
            after_start = position + len(start)
            ends = [after_start]
            if end:
                ends = [p + len(end) for p in self._occurrences(end, after_start)]
            for finish in ends:
                if not suffix or self._followed_by(finish, suffix):
                    return position, finish
        return None

    def _preceded_by(self, position: int, prefix: str) -> bool:
        before = self.normalised[:position].rstrip()
        return before.endswith(prefix) and self._bounded(len(before) - len(prefix), len(before))

    def _followed_by(self, position: int, suffix: str) -> bool:
        rest = self.normalised[position:]
        begin = position + len(rest) - len(rest.lstrip())
        return rest.lstrip().startswith(suffix) and self._bounded(begin, begin + len(suffix))

    def words(self, start: int, end: int) -> list[str]:
        """The original words covering the normalised span [start, end)."""
        origin = self._normalised[1]
        if start >= end:
            return []
        return self.text[origin[start] : origin[end - 1] + 1].split()

    def _words_before(self, start: int, count: int) -> list[str]:
        origin = self._normalised[1]
        return self.text[: origin[start]].split()[-count:] if start else []

    def _words_after(self, end: int, count: int) -> list[str]:
        origin = self._normalised[1]
        return self.text[origin[end - 1] + 1 :].split()[:count]

    def directive_for(self, start: int, end: int) -> TextDirective:
        """A directive whose first match is exactly the normalised span [start, end).

        Shortest first: the whole passage when short, else its first and last few words,
        growing; then the same with a few words of context before and after. If the
        passage itself repeats with identical context, the first shape is returned: a
        browser then highlights an identical earlier copy of the same words.
        """
        words = self.words(start, end)
        shapes = (
            [TextDirective(" ".join(words))]
            if len(words) <= EXACT_WORDS
            else [
                TextDirective(" ".join(words[:k]), " ".join(words[-k:]))
                for k in range(TERM_WORDS, len(words) // 2 + 1)
            ]
        )
        for context in range(MAX_CONTEXT_WORDS + 1):
            prefix = " ".join(self._words_before(start, context)) if context else ""
            suffix = " ".join(self._words_after(end, context)) if context else ""
            for shape in shapes:
                candidate = TextDirective(shape.start, shape.end, prefix, suffix)
                if self.locate(candidate) == (start, end):
                    return candidate
        return shapes[0]
