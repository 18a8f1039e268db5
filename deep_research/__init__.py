"""deep_research: a LangGraph deep-research agent.

Importing the package reads the nearest `.env` (below the process environment; see
`envfile`), so the Python API and notebooks are configured as the CLI and `langgraph dev` are.
"""

from deep_research.config import envfile

envfile.load_once()
