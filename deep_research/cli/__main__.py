"""`python -m deep_research.cli`: the same entry point as the `deep-research` script."""

from deep_research.cli.main import main

raise SystemExit(main())
