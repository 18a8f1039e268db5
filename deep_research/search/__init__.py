"""Search services: providers, fallback chain, budget, per-run cache, relevance, safe fetch."""
