"""Summary jobs: LLM summaries made by workers, off the request path."""
