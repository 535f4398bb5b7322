"""The README's ten-line agent loop: contextd builds every prompt, the OpenAI SDK calls the
model. Needs a running contextd (CONTEXTD_URL, default http://127.0.0.1:8080) and an
OpenAI-compatible endpoint (OPENAI_BASE_URL / OPENAI_API_KEY, read by the OpenAI SDK).

    pip install contextd-client openai && python examples/quickstart.py
"""

import os

from openai import OpenAI

from contextd_client import Contextd

MODEL = os.environ.get("MODEL", "gpt-4o")

llm, ctx = OpenAI(), Contextd(os.environ.get("CONTEXTD_URL", "http://127.0.0.1:8080"))
session = ctx.create_session(model=MODEL, system={"global": "You are a concise assistant."})
while question := input("> "):
    prompt = ctx.start_turn(session["id"], question)
    reply = llm.chat.completions.create(model=MODEL, messages=prompt["messages"])
    answer = reply.choices[0].message.content
    ctx.complete_turn(session["id"], prompt["turn_id"], answer)
    print(answer)  # noqa: T201
