"""gpt-oss prompts, counted by contextd and rendered by OpenAI's own harmony library.

    python -m bench.gpt_oss_counts [--seed N] [--sessions 3] [--window 8192]

Needs ``pip install openai-harmony`` (not a dependency of contextd) and o200k_base's vocab
file: set ``TIKTOKEN_ENCODINGS_BASE`` to a folder holding ``o200k_base.tiktoken``. gpt-oss
speaks the harmony format, whose text encoding (o200k_harmony) splits text as o200k_base
does; what differs is the framing: a system message the server writes (model identity,
knowledge cutoff, reasoning effort, channels), the instructions and tools in a developer
message (tools as a TypeScript namespace), calls and results on the commentary channel.
contextd counts gpt-oss as o200k_base x the table's factor with OpenAI's message and tool
rules. For generated sessions (bench.tokenizers' kinds of text and 20 tools), each prompt a
budget on that count would send is rendered by ``openai_harmony`` and the table prints the
prompts over the input budget, the worst and mean fill, the worst real/counted ratio, and
the most tokens a prompt's real count was above contextd's (negative: never above).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from app.budget.policy import BudgetSettings, compute_budget
from app.budget.tokens import count_message, count_request, lookup_model
from app.tokens.registry import TokenizerRegistry
from bench.tokenizers import session, tools

Message = dict[str, Any]


def harmony_tokens(encoding: Any, messages: list[Message], declared: list[Message]) -> int:
    """The prompt as a gpt-oss server renders it for the completion."""
    from openai_harmony import (
        Author,
        Conversation,
        DeveloperContent,
        Role,
        SystemContent,
        ToolDescription,
    )
    from openai_harmony import Message as HarmonyMessage

    instructions = "\n\n".join(str(m["content"]) for m in messages if m["role"] == "system")
    developer = DeveloperContent.new().with_instructions(instructions)
    if declared:
        developer = developer.with_function_tools(
            [
                ToolDescription.new(
                    tool["function"]["name"],
                    tool["function"].get("description", ""),
                    parameters=tool["function"].get("parameters"),
                )
                for tool in declared
            ]
        )
    rendered = [
        HarmonyMessage.from_role_and_content(Role.SYSTEM, SystemContent.new()),
        HarmonyMessage.from_role_and_content(Role.DEVELOPER, developer),
    ]
    names: dict[str, str] = {}
    for message in messages:
        role = message["role"]
        if role == "user":
            rendered.append(HarmonyMessage.from_role_and_content(Role.USER, message["content"]))
        elif role == "assistant":
            if message.get("content"):
                rendered.append(
                    HarmonyMessage.from_role_and_content(
                        Role.ASSISTANT, message["content"]
                    ).with_channel("final")
                )
            for call in message.get("tool_calls") or ():
                name = call["function"]["name"]
                names[call["id"]] = name
                rendered.append(
                    HarmonyMessage.from_role_and_content(
                        Role.ASSISTANT, call["function"]["arguments"]
                    )
                    .with_channel("commentary")
                    .with_recipient(f"functions.{name}")
                    .with_content_type("<|constrain|>json")
                )
        elif role == "tool":
            author = Author.new(Role.TOOL, f"functions.{names.get(message['tool_call_id'], '')}")
            rendered.append(
                HarmonyMessage.from_author_and_content(author, message["content"])
                .with_recipient("assistant")
                .with_channel("commentary")
            )
    conversation = Conversation.from_messages(rendered)
    return len(encoding.render_conversation_for_completion(conversation, Role.ASSISTANT))


def main() -> None:
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument("--factor", type=float, help="count with this factor instead")
    args = parser.parse_args()
    encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    spec = lookup_model("gpt-oss-20b")
    if args.factor:
        spec = replace(spec, safety_factor=args.factor)
    counter, _ = TokenizerRegistry().counter_for(spec)
    budget = compute_budget(
        model_context_limit=args.window,
        max_output_tokens=spec.max_output_tokens or args.window,
        settings=BudgetSettings(),
    ).input_budget
    print(  # noqa: T201
        f"gpt-oss, counted as {counter.name}; {args.window // 1024}k window, input budget "
        f"{budget}; seed {args.seed}, {args.sessions} sessions\n\n"
        "| tools | prompts | over budget | max fill | mean fill | worst real/counted "
        "| most real over counted |\n|---:|---:|---:|---:|---:|---:|---:|"
    )
    for n_tools in (0, 20):
        declared = tools(n_tools)
        fills: list[float] = []
        ratios: list[float] = []
        gaps: list[int] = []
        for number in range(args.sessions):
            messages = [m for _, m in session(args.seed * 100 + number, steps=60)]
            counts = [count_message(counter, m) for m in messages]
            fixed = count_request(counter, [], declared).input_tokens + counts[0]
            for end in range(5, len(messages) + 1, 4):
                used, start = fixed, end
                while start > 1 and used + counts[start - 1] <= budget:
                    start -= 1
                    used += counts[start]
                while start < end and messages[start]["role"] == "tool":
                    start += 1
                prompt = [messages[0], *messages[start:end]]
                counted = fixed + sum(counts[start:end])
                real = harmony_tokens(encoding, prompt, declared)
                fills.append(real / budget)
                ratios.append(real / counted)
                gaps.append(real - counted)
        print(  # noqa: T201
            f"| {n_tools} | {len(fills)} | {sum(f > 1 for f in fills)} | {max(fills):.1%} "
            f"| {sum(fills) / len(fills):.1%} | {max(ratios):.3f} | {max(gaps)} |"
        )


if __name__ == "__main__":
    main()
