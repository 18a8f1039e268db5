"""The data fence: how web text is marked as data, not instructions, wherever a model reads it.

    <<<data NONCE>>>
    ...web text...
    <<<end data NONCE>>>

The nonce is random per tool call, so a page cannot predict it, and anything in the text
that looks like a delimiter is defused first: the first closing line with the opening's
nonce is the fence's own.
"""

from __future__ import annotations

import re
import secrets

# Fence look-alikes, including Markdown-escaped ones (trafilatura writes "<" as "\<").
_OPENER_LOOKALIKE = re.compile(r"(?:\\?<){3}")
_CLOSER_LOOKALIKE = re.compile(r"(?:\\?>){3}")
# An opening fence line as `fence` writes it (web text cannot forge one: it is defused).
OPENER = re.compile(r"^<<<data ([0-9a-f]+)>>>$", re.MULTILINE)
_FENCED = re.compile(r"<<<data ([0-9a-f]+)>>>\n(.*?)\n<<<end data \1>>>", re.DOTALL)


def new_nonce() -> str:
    return secrets.token_hex(6)


def defuse(text: str) -> str:
    """Make delimiter look-alikes in web text inert (the fences are built from <<< and >>>)."""
    return _CLOSER_LOOKALIKE.sub("›››", _OPENER_LOOKALIKE.sub("‹‹‹", text))


def closer(nonce: str) -> str:
    """The line that closes the fence opened with `nonce`."""
    return f"<<<end data {nonce}>>>"


def fence(text: str, nonce: str) -> str:
    return f"<<<data {nonce}>>>\n{defuse(text)}\n{closer(nonce)}"


# Everything `fence` adds around the text: two lines and a 12-digit nonce in each.
FENCE_CHARS = len(fence("", new_nonce()))


_MARKS = re.compile(r"<<<(end )?data [0-9a-f]+>>>")


def without_nonces(text: str) -> str:
    """`text` with each fence's nonce left out: what it says, whichever nonces it was fenced
    with (a durable call's identity: runtime/durable.py). Web text cannot forge a fence line."""
    return _MARKS.sub(lambda mark: f"<<<{mark.group(1) or ''}data>>>", text)


def unfence(text: str) -> str:
    """`text` with each of its fences replaced by what it holds, to be fenced again whole.

    Fenced text was defused, so it holds no delimiter: the first closing line with the
    opening's nonce is the fence's own.
    """
    return _FENCED.sub(r"\2", text)
