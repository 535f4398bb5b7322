"""Idempotent retries: a request sent again with the same ``Idempotency-Key`` gets the first
answer back, and nothing is stored twice."""
