"""The graph's nodes, one family a file: question, recall, clarify, orchestrator, plan review,
finalize, remember; churn is the orchestrator's guard, tool_names its tools' names. The
researcher subgraph and the task that runs it are `deep_research.researcher`."""
