"""The drop-in endpoints: ``POST /v1/chat/completions`` and ``POST /v1/messages`` take the
request an agent sends to OpenAI or Anthropic, fit it to the model's window, forward it to the
configured upstream and record the answer (docs/drop-in.md)."""
