"""A researcher: the subgraph that searches and writes one cited report (`graph`), and the
`research` task that runs it for one orchestrator call (`task`)."""
