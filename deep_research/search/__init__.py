"""Search services: providers and the per-run search budget."""
