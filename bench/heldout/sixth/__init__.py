"""The sixth held-out set: sessions of a coding agent, a travel-booking assistant, a DevOps
on-call agent, a personal-finance helper and a research assistant, written apart from the
first five sets and from the code they measure."""

from bench.heldout.sixth.generator import REPORT_SEEDS, TUNING_SEEDS, generate

__all__ = ["REPORT_SEEDS", "TUNING_SEEDS", "generate"]
