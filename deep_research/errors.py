"""`DeepResearchError`: the one base of every error this package raises.

A caller (the CLI, a notebook, the MCP tool) that wants "anything deep_research said went
wrong" catches this. Each error keeps the built-in base it had (`ValueError` for a bad
value, `RuntimeError` for a failed run, `LookupError` for something not found), so
`except ValueError` still reads as before. The family, by where a user meets it:

- configuration: `ConfigError` (config.names), `PromptError` (runtime.prompts);
- the model: `ModelEndpointError`, `ModelDeadlineError`, `ReplyTimeoutError`,
  `ModelServerError`, `ContextTooLongError` (llm.errors), `EmptyReplyError`, `CallLost`
  (llm.models: a call in flight at a stop, counted);
- a run: `EmptyQuestionError` (nodes.question), `UnverifiedReportError` (citations.check),
  `SearchError` (search.types), `MemoryUnavailable` (memory.location),
  `Unreadable` (library.readers);
- the CLI: `UsageError` (cli.args, for every command), `ResumeError` (cli.session),
  `BadThreadIdError` and `UnknownRunError` (cli.runs); the MCP tool: `RunFailed` (mcp.run).

`ReadableError` marks those whose message alone says what failed and what to do (the model
endpoint's, an empty reply, a run that cannot be resumed, memory in use): the CLI prints
them as they are, and any other with its class name.

The rest are caught where they are raised and never reach a user (a cap reached, a body
too large, a model's unreadable decision); they share the base so nothing escapes it.
"""


class DeepResearchError(Exception):
    """Something deep_research could not do; the message says what and, where it can, why."""


class ReadableError(DeepResearchError):
    """An error whose message alone tells a user what failed and what to do (an endpoint that
    is down, a run that cannot be resumed, a store in use): the CLI prints just the message.
    Any other error it prints with its class name, and after a run with how to resume it."""


# The first version whose records (checkpoints, run logs, memory entries) this one reads.
RECORDS_SINCE = "0.1.0"


class OldDataError(ReadableError):
    """Data written by a build before `RECORDS_SINCE`, which this version refuses to read
    rather than carry a second code path for it."""

    def __init__(self, what: str, instead: str) -> None:
        super().__init__(
            f"{what} was written before deep_research {RECORDS_SINCE} and cannot be read "
            f"by this version: {instead}"
        )
