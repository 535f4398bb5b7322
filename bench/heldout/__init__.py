"""Held-out evaluation: sessions made by rules of their own, never those the summariser and
recall are tuned with, scored by kind through the real app.

- ``python -m bench.heldout``: generated tool-using sessions (report seeds 1000-1009).
- ``python -m bench.heldout.locomo --data PATH``: LoCoMo's human-written dialogues.
- ``python -m bench.heldout.traffic``: long turns and a DeepSeek reasoner, as agents send them.
"""
