"""The pure budget core: plain data in, decisions out. No web framework, no database, no I/O
beyond loading a tokenizer's BPE file once."""
