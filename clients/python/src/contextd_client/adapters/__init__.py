"""Adapters for agent frameworks, each behind an extra of its own."""
