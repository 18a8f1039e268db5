"""An open-access article's full text, end to end (real ChatOpenAI, Europe PMC provider and
fetch over 127.0.0.1): the researcher reads the sections of Europe PMC's JATS XML that
answer it, and the report cites them at the article's PMC page with a checked fragment."""

from __future__ import annotations

import pytest

from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.page_server import PageServer
from tests.support.fakes.scholarly_servers import FakeJsonApi, europepmc_record
from tests.support.jats import article_xml
from tests.support.paper_run import ReportingBrain, researched
from tests.support.search import PAGES_HOST

ABSTRACT = "We measure heat pump efficiency in cold climates over three winters."
RESULTS = "Heat pump efficiency in cold climates fell by 12 percent at minus 20 degrees."
FUNDING = "The authors thank the regional energy council for its grant."
ARTICLE = article_xml(
    "Heat pumps in cold climates",
    ABSTRACT,
    [("Methods", ["We logged 40 houses."]), ("Results", [RESULTS]), ("Funding", [FUNDING])],
)
PAGE = "https://pmc.ncbi.nlm.nih.gov/articles/PMC7745181/"
# The report quotes the results section, and a section the researcher never saw.
CITING = (
    f'Efficiency drops [in the study]({PAGE} "fell by 12 percent at minus 20"). '
    f'It was [funded]({PAGE} "regional energy council").'
)


async def test_an_open_access_article_is_read_in_sections_and_cited_at_its_pmc_page(
    monkeypatch: pytest.MonkeyPatch, pages: PageServer
) -> None:
    record = europepmc_record("Heat pumps in cold climates", ABSTRACT, pmcid="PMC7745181")
    payload = {"hitCount": 1, "resultList": {"result": [record]}}
    files = {"/rest/PMC7745181/fullTextXML": ("application/xml;charset=UTF-8", ARTICLE)}
    with (
        FakeJsonApi("/rest/search", payload, files=files) as europepmc,
        ScriptedOpenAIServer(ReportingBrain(body=CITING)) as llm,
    ):
        monkeypatch.setenv("EUROPEPMC_API_URL", europepmc.api_url)
        # The full text is on the API's host, 127.0.0.1 here: an intranet the user allows.
        monkeypatch.setenv("FETCH_ALLOWED_HOSTS", f"{PAGES_HOST},127.0.0.1")
        out, seen = await researched(monkeypatch, llm, "europepmc", "Heat pump efficiency in cold?")

    assert ABSTRACT in seen and RESULTS in seen and "of the article's 3 sections" in seen
    assert FUNDING not in seen and "TABLE CELL" not in seen and "REFERENCE TITLE" not in seen
    (source,) = [s for s in out["sources"] if s["url"] == PAGE]
    assert RESULTS in source["content"] and FUNDING not in source["content"]

    report, check = out["final_report"], out["citation_check"]
    body = report.split("## Sources")[0]
    assert f"[in the study]({PAGE}#:~:text=fell%20by%2012%20percent%20at%20minus%2020)" in body
    assert f"[funded]({PAGE})" in body, "a quote from a section not read: its fragment dropped"
    assert check["fragments_built"] == 1 and check["fragments_dropped"] == 1
    assert check["fabricated_removed"] == 0
