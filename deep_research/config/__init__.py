"""Configuration: every setting of a run (`settings.Context`), the environment-only
`endpoints`, what a setting lacks here (`problems`), the names a setting may take (`names`,
light enough for `--help`) and `.env` loading.

Nothing is imported here, so `deep-research --help` and `import deep_research` stay light:
import `deep_research.config.settings` for `Context`.
"""
