"""Deterministic evaluators for research reports, a question set, and a runner."""
