"""The graph's nodes, one family a file: question, recall, clarify, orchestrator, plan review,
finalize, remember; planning and dispatch are what a planning call sends and where its reply
goes, churn the orchestrator's guard. The researcher subgraph and the task that runs it are
`deep_research.researcher`."""
