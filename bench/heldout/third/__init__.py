"""The third held-out set: sessions of a clinic's scheduling desk, a renovation contractor's
office, a recruiting team, a wedding and event planner and an on-call engineer, written apart
from the first two sets and from the code they measure."""

from bench.heldout.third.generator import REPORT_SEEDS, generate

__all__ = ["REPORT_SEEDS", "generate"]
