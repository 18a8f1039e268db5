"""What each setting means, as Studio's form and docs/configuration.md show it.

`settings.Context` holds each setting's type, default and bounds and takes its description
from here, so the model reads as one table; `config.reference` writes the page from the
model, and a test keeps this table and the model in the same order, name for name.
"""

from __future__ import annotations

HELP: dict[str, str] = {
    "clarifier_model": (
        "Model that asks the clarifying questions, as 'provider:model' "
        "(providers: local, openai, anthropic, ollama, google_genai, groq, mistralai, bedrock "
        "and every other langchain init_chat_model provider, with its extra installed). "
        "Default: local:$LLM_MODEL."
    ),
    "orchestrator_model": "Model that plans, delegates research and writes the report.",
    "researcher_model": "Model that runs searches and writes each cited intermediate report.",
    "clarifier_temperature": (
        "Sampling temperature for the clarifier. Unset: 0.1 on local: and "
        "ollama: (small models need it to keep formats), the provider's default elsewhere."
    ),
    "orchestrator_temperature": "Sampling temperature for the orchestrator.",
    "researcher_temperature": "Sampling temperature for the researchers.",
    "local_thinking": (
        "Thinking (<think> reasoning) on local endpoints, sent as "
        "chat_template_kwargs.enable_thinking. off: faster, and small models stop hiding "
        "tool calls inside <think>; on; server: send nothing, the server decides."
    ),
    "one_slot_server": (
        "Whether the model server answers one request at a time (mlx_lm.server, "
        "llama-cpp-python): there researchers take turns at it, each continuing its cached "
        "prompt, and the report is one call. auto: found out from the run's own calls, on "
        "local: and ollama: only; on: from the start; off: never."
    ),
    "allow_clarification": "Ask the user 2-3 clarifying questions before researching.",
    "max_clarification_rounds": "Most rounds of clarifying questions per run.",
    "report_language": (
        "The report's language. auto: the language the question is written in; "
        "else a code (de, zh, ...) or a name (German, Swahili). Headings code adds follow "
        "it where it has them, else stay English; quoted page words are never translated."
    ),
    "report_length": (
        "The report's length when the question does not ask for one: brief "
        "(150-400 words), standard (600-1,200), detailed (1,500-3,000); the completion limit "
        "of the report is sized to it. A form the question asks for (a table, sections) wins."
    ),
    "report_in_sections": (
        "Write the report as sections in parallel once the plan is all researched "
        "(or at the turn cap): one call per researched topic from its findings alone, one for "
        "the title, opening and conclusion from short digests, stitched and checked as one "
        "report. auto: not when the request asks for a table or a comparison across topics, "
        "nor on a one-slot server (one_slot_server, or max_researchers_per_turn 1), where "
        "the parts queue; "
        "on: whenever two or more topics were researched; off: one call writes the report. "
        "Never under max_cost_usd (its report shrinks to fit) nor with a single topic."
    ),
    "review_plan": (
        "Pause on the orchestrator's first plan until the user approves it: "
        'resume with "ok", a list of strings (the new plan) or {"feedback": "..."} (the '
        "plan is revised and shown again). Off where nobody can answer (a piped CLI)."
    ),
    "max_plan_reviews": (
        "Most plan reviews per question; after the last feedback the revised "
        "plan runs without asking again."
    ),
    "max_researchers_per_turn": (
        "Most researchers running at once; further research calls wait their turn."
    ),
    "max_research_calls_per_reply": (
        "Research calls run per orchestrator reply; the calls beyond it are "
        "answered with an error naming this limit, to be made again next turn."
    ),
    "max_orchestrator_turns": (
        "Orchestrator model calls before it must write the report without tools."
    ),
    "max_todo_updates": (
        "write_todos calls per run; later ones are answered 'plan locked' and change nothing."
    ),
    "max_todo_only_turns": (
        "Consecutive orchestrator replies that only update todos before todo "
        "updates are locked for the rest of the run."
    ),
    "max_repeated_calls": (
        "The same tool call with the same arguments in this many consecutive "
        "orchestrator replies is refused with a message instead of run again."
    ),
    "max_researcher_turns": "Model calls per researcher before it must write its report.",
    "max_searches_per_run": (
        "Real searches allowed per thread, across all researchers and resumes."
    ),
    "max_mcp_calls_per_run": (
        "Calls of MCP servers' tools (MCP_SERVERS_FILE) allowed per thread, "
        "across all researchers; 0: none offered."
    ),
    "max_cost_usd": (
        "Most the thread's model calls may cost, in USD, across all researchers "
        "and resumes; a call whose worst case would pass it is not sent and the report is "
        "written from what the run has. Unset: no budget (costs are still shown)."
    ),
    "tavily_credit_usd": (
        "What one Tavily API credit costs you, in USD (a basic search is one "
        "credit), for the cost shown; SearXNG, DuckDuckGo and the library are free."
    ),
    "max_results_per_search": "Results requested from the provider per query.",
    "search_provider": (
        "Search backend. auto: tavily when TAVILY_API_KEY is set, else searxng "
        "when SEARXNG_URL is set, else ddgs. arxiv, openalex, europepmc: papers' abstracts "
        "and open-access full texts or PDFs; "
        "wikipedia: articles (all keyless). library: only your documents (deep-research "
        "library add), never the web; search_fallback is then ignored."
    ),
    "search_fallback": (
        "Comma-separated providers tried in order when the main one fails, is "
        "rate-limited or finds nothing, e.g. 'tavily,searxng,ddgs'. Empty: no fallback."
    ),
    "scholarly_sources": (
        "With search_provider=auto, the orchestrator may mark a topic scholarly (a paper, "
        "a drug, a definition): its researchers may also choose arxiv, europepmc, openalex "
        "and wikipedia (keyless) for a search; the web stays the default (never when auto "
        "resolves to your SearXNG). false: only the web provider and search_fallback."
    ),
    "search_library": (
        "Search your document library (deep-research library add) in every "
        "search step too, beside the web; its passages pass the same relevance filter."
    ),
    "relevance_filter": (
        "Score search results with all-MiniLM-L6-v2 and drop those below "
        "relevance_threshold. false: results are kept unscored in the provider's order, and a "
        "run starts without the relevance model (memory still uses it when it is there)."
    ),
    "relevance_threshold": (
        "Search results whose relevance is below this are dropped. Relevance is "
        "the cosine similarity (0-1, negatives count as 0) of all-MiniLM-L6-v2 embeddings of "
        "the query and the result's title + snippet, the same for every provider. 0 keeps all."
    ),
    "fetch_top_n": (
        "Pages read after each search: the N most relevant results are fetched "
        "and their main text extracted. 0: researchers see snippets only."
    ),
    "fetch_timeout": "Seconds allowed for fetching one page.",
    "max_page_chars": (
        "Characters of extracted text kept per page: the most one source can "
        "contribute to a researcher's context."
    ),
    "max_chars_per_turn": (
        "Characters of search results and page text one researcher turn receives "
        "in total; page excerpts are shortened to fit."
    ),
    "use_memory": (
        "Remember published reports and the passages they cite (in MEMORY_DIR or "
        "the Chroma server at CHROMA_HOST), show similar earlier reports to the orchestrator, "
        "and answer searches from stored passages. false: memory is neither read nor written."
    ),
    "memory_min_similarity": (
        "How similar (MiniLM cosine, 0-1, the relevance scale) an earlier report "
        "must be to the question, and a stored passage to a search query (at least "
        "relevance_threshold too), to be used."
    ),
    "memory_max_age_days": (
        "Stored passages older than this many days are not used to answer "
        "searches (the web is searched instead). 0: never answer from memory."
    ),
}
