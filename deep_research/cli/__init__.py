"""The `deep-research` command: live progress, durable runs, a traffic log and its replay.

Nothing in the package imports this; it is a face on top of `deep_research.graph`.
"""
