"""What contextd did with a session's prompts, read through the client: the session's rollup,
then each assembly of its latest turn (a turn's start and each tool step) with its budget,
its blocks and the policy's events, and why a refused one was refused.

    pip install contextd-client
    python examples/audit.py SESSION_ID

Needs a running contextd (CONTEXTD_URL) and, when it has API keys, one with the ops scope
(CONTEXTD_API_KEY).
"""

import os
import sys

from contextd_client import Contextd


def main(session_id: str) -> None:
    with Contextd(
        os.environ.get("CONTEXTD_URL", "http://127.0.0.1:8080"),
        api_key=os.environ.get("CONTEXTD_API_KEY"),
    ) as ctx:
        rollup = ctx.audit_rollup(session_id)
        print(  # noqa: T201
            f"{rollup['turns']} turns, {rollup['assemblies']} assemblies: "
            f"{rollup['summary_triggers']} summary triggers, {rollup['prunes']} prunes, "
            f"{rollup['rejections']} rejections; prompt tokens max {rollup['prompt_tokens']['max']}"
        )
        latest = ctx.list_audit(session_id=session_id, limit=1)["items"]
        if not latest or latest[0]["turn_id"] is None:
            return
        for row in ctx.turn_audit(session_id, latest[0]["turn_id"]):
            used, budget = row["estimated_input_tokens"], row["input_budget"]
            print(  # noqa: T201
                f"step {row['step']}: {used} of {budget} tokens, blocks {row['blocks']}"
                + (" summarised" if row["summary_triggered"] else "")
                + (" pruned" if row["prune_triggered"] else "")
            )
        if rollup["last_rejection_id"] is not None:
            refused = ctx.get_audit(rollup["last_rejection_id"])
            print(f"last refusal: {refused['rejection']}")  # noqa: T201


if __name__ == "__main__":
    main(sys.argv[1])
