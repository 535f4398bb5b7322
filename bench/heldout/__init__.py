"""Held-out evaluation: sessions made by rules of their own, never those the summariser and
recall are tuned with, scored by kind through the real app.

- ``python -m bench.heldout``: generated tool-using sessions, four sets written apart (first:
  report seeds 1000-1009; ``--set second``: 3000-3009; ``--set third``: 5000-5009; ``--set
  fourth``: 6000-6009), with the extractive or (``--summarizer llm``) the LLM summariser
  against a scripted model.
- ``python -m bench.heldout.locomo --data PATH``: LoCoMo's human-written dialogues.
- ``python -m bench.heldout.traffic``: long turns and a DeepSeek reasoner, as agents send them.
"""
