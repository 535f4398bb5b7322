"""The fifth held-out set: sessions of an insurance claims handler, a school office
administrator, a restaurant's stock-and-ordering assistant, an analytics (SQL) agent and a
grant-writing assistant, written apart from the first four sets and from the code they
measure."""

from bench.heldout.fifth.generator import REPORT_SEEDS, generate

__all__ = ["REPORT_SEEDS", "generate"]
