"""`python -m deep_research.server`: see `deep_research.server.launch`."""

from deep_research.server.launch import main

raise SystemExit(main())
