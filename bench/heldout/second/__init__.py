"""The second held-out set: sessions of a travel-booking, personal-finance, customer-support,
research and coding agent, written apart from the first set and from every tuning set."""

from bench.heldout.second.generator import REPORT_SEEDS, generate

__all__ = ["REPORT_SEEDS", "generate"]
