"""Reports as `finalize` writes them, for the export tests and `benchmarks/export.py`.

`sample_report()` holds every kind of block and link a report can: headings, lists, a
table, emphasis, code, citations with text fragments, a library PDF's `file:` link with
`#page=N`, and the `## Sources` list with a retrieval date. `many_citations(n)` is the
same shape with `n` cited pages, each with a fragment.
"""

from __future__ import annotations

QUESTION = "Are heat pumps worth it in Norway?"
FRAGMENT_URL = "https://energy.example/heat-pumps#:~:text=saves%20about%20half"
PAGE_URL = "https://energy.example/heat-pumps"
STATS_URL = "https://stats.example/norway/2024?table=heating"
LIBRARY_PATH = "/home/ada/library/field-test.pdf"  # a document in the library
LIBRARY_URL = f"file://{LIBRARY_PATH}#page=3"
SAMPLE_URLS = (FRAGMENT_URL, STATS_URL, LIBRARY_URL)
INFO = {
    "question": QUESTION,
    "date": "2026-12-01",
    "thread_id": "a1b2c3d4",
    "models": {"orchestrator": "local:qwen3-8b", "researcher": "local:qwen3-8b"},
    "searches": 12,
    "citation_check": {
        "links_kept": 3,
        "fabricated_removed": 1,
        "fragments_kept": 1,
        "fragments_built": 1,
        "fragments_dropped": 0,
    },
    "library": frozenset({LIBRARY_PATH}),
}


def sample_report() -> str:
    return f"""\
# Heat pumps in Norway

Air-to-water heat pumps **cut heating bills** in most Norwegian homes; a field test
[saves about half]({FRAGMENT_URL}) of the electricity a panel heater uses, and *most*
installations since 2015 are [air-to-air]({STATS_URL}).

## Costs and savings

- Installation: `NOK 25,000-40,000`
- Payback: 4-7 years
  1. sooner in the north
  2. later in Bergen

| Region | Share with a heat pump |
| --- | ---: |
| Oslo | 45 % |
| Tromsø | 31 % |

### Measured in the field

The [field test, page 3]({LIBRARY_URL}) logged a seasonal COP of 2.9:

```text
COP = heat delivered / electricity used
```

> Cold snaps below -20 °C lower the COP, ~~but~~ and the backup heater takes over.

## Sources

1. [Heat pumps in cold climates]({PAGE_URL})
2. [Heating in Norwegian homes, 2024]({STATS_URL}) (retrieved 2026-11-30)
3. [field-test.pdf, page 3]({LIBRARY_URL})
"""


def citation_url(number: int) -> str:
    return f"https://site{number}.example/article/{number}#:~:text=finding%20{number}"


def many_citations(count: int) -> str:
    """A report citing `count` pages, each once in the text and once in Sources."""
    paragraphs = [
        f"Finding {n} is reported by [source {n}]({citation_url(n)}), and *it holds* "
        f"in the data of year {2000 + n % 25}."
        for n in range(1, count + 1)
    ]
    sources = [
        f"{n}. [Article {n} on site {n}](https://site{n}.example/article/{n}) "
        f"(retrieved 2026-11-{1 + n % 28:02d})"
        for n in range(1, count + 1)
    ]
    body = "\n\n".join(paragraphs)
    return f"# Many sources\n\n## Findings\n\n{body}\n\n## Sources\n\n" + "\n".join(sources) + "\n"
