"""The graph on a distributed Agent Server: Aegra, with Postgres and Redis, any number of instances.

`aegra.json` (beside `langgraph.json`) names the same graph and mounts `app` as its custom
HTTP app (`/mcp`) and `auth` as its auth hook; `python -m deep_research.server` starts one
instance. Nothing in the package imports this one: it is the outermost face, and it needs
the `server` extra (Python 3.12+). See docs/distributed.md.
"""
