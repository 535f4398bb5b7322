"""Tenants and API keys: who is calling, for which tenant, with which scopes."""
