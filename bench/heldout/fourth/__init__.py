"""The fourth held-out set: sessions of a law firm's intake paralegal, a home-automation
agent, a language tutor, a freight dispatcher and a laboratory's sample-tracking assistant,
written apart from the first three sets and from the code they measure."""

from bench.heldout.fourth.generator import REPORT_SEEDS, generate

__all__ = ["REPORT_SEEDS", "generate"]
