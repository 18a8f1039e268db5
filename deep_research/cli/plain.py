"""Text from outside, shown in the terminal exactly as written.

Questions, answers, topics, todos, search queries, clarifying questions, error text and
file names come from the user, a model, a web page or a file on disk. Rich would read
`[/usr/bin]` as a closing tag (`MarkupError`, the run ends), `[link=…]` as a live
hyperlink and `:warning:` as an emoji; a raw escape code would reach the terminal as is.
So the CLI's console never parses markup or emoji (styles come only from `Text` and
`Style` objects), and `plain` turns outside text into inert `Text` without control codes.
"""

from __future__ import annotations

import re

from rich.console import Console
from rich.style import Style
from rich.text import Text

# C0 and C1 control codes except tab and newline: ESC starts terminal escape sequences (an
# OSC 8 hyperlink, a title change, cursor moves), and 0x9b / 0x9d are their one-byte forms.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: object) -> str:
    """`text` as a string without terminal control codes (for plain `print` to stderr)."""
    return _CONTROL.sub("", str(text))


def plain(text: object, style: str | Style = "") -> Text:
    """`text` as rich `Text` that shows literally: no markup, no emoji, no control codes."""
    return Text(printable(text), style=style)


def terminal_console() -> Console:
    """The CLI's console: a `str` printed on it is never parsed as markup or emoji."""
    # soft_wrap: long lines stay whole in logs and pipes; the live view sizes itself.
    return Console(soft_wrap=True, markup=False, emoji=False, highlight=False)
