"""Optional embeddings of stored messages, for semantic search and recall."""
