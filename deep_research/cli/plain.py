"""Text from outside, shown in the terminal exactly as written.

Questions, answers, topics, todos, search queries, clarifying questions, error text and
file names come from the user, a model, a web page or a file on disk. Rich would read
`[/usr/bin]` as a closing tag (`MarkupError`, the run ends), `[link=…]` as a live
hyperlink and `:warning:` as an emoji; a raw escape code would reach the terminal as is.
So the CLI's console never parses markup or emoji (styles come only from `Text` and
`Style` objects), and `plain` turns outside text into inert `Text` without control codes.
"""

from __future__ import annotations

from rich.console import Console
from rich.style import Style
from rich.text import Text

from deep_research.text.controls import without_controls


def plain(text: object, style: str | Style = "") -> Text:
    """`text` as rich `Text` that shows literally: no markup, no emoji, no control codes."""
    return Text(without_controls(text), style=style)


def terminal_console() -> Console:
    """The CLI's console: a `str` printed on it is never parsed as markup or emoji."""
    # soft_wrap: long lines stay whole in logs and pipes; the live view sizes itself.
    return Console(soft_wrap=True, markup=False, emoji=False, highlight=False)
