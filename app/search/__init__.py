"""Full-text search of a session's stored messages, whatever their state."""
