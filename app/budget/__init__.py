"""The pure budget core: plain data in, decisions out. No web framework, no database, no I/O,
no logging, no locks and no process-wide caches (tests/unit/test_architecture.py checks its
imports); tokenizers are loaded and their caches kept by :mod:`app.tokens.registry` and the
runtime, and handed in."""
