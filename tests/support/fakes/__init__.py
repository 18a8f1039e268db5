"""In-process fake services (OpenAI, Tavily) for tests."""
