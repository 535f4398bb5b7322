"""The same scripted agent as bench/drop_in_agent.py, written against the ``openai`` npm
package and run by Node: 300 turns at an 8k model through contextd's drop-in endpoint, JSON
and streamed.

contextd (uvicorn, a fresh SQLite file) and the fake model (tests/fake_upstream.py) run on
127.0.0.1; the agent is bench/node/agent.mjs (``npm install`` in bench/node first).

    python -m bench.drop_in_node [--turns 300]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from bench.drop_in_stream import serve_contextd
from tests.fake_upstream import serve_fake_upstream

AGENT = Path(__file__).resolve().parent / "node" / "agent.mjs"


def run(turns: int) -> list[str]:
    lines = [
        "| SDK | mode | calls | context-length errors | invalid requests | audited calls |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for stream in (False, True):
        with (
            tempfile.TemporaryDirectory() as folder,
            serve_fake_upstream(tool_rounds=2, parallel_calls=2, answer_chars=300) as upstream,
            serve_contextd(upstream.url, Path(folder)) as url,
        ):
            finished = subprocess.run(
                ["node", str(AGENT), url, str(turns), "1" if stream else "0"],
                check=True,
                capture_output=True,
                text=True,
            )
            figures = json.loads(finished.stdout.strip().splitlines()[-1])
            invalid = figures["invalid"] + len(upstream.refusals)
        lines.append(
            f"| openai (npm, Node) | {'stream' if stream else 'json'} | {figures['calls']} "
            f"| {figures['contextLengthErrors']} | {invalid} | {figures['audited']} |"
        )
        print(lines[-1], flush=True)  # noqa: T201
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    arguments = parser.parse_args()
    print("\n".join(run(arguments.turns)))  # noqa: T201


if __name__ == "__main__":
    main()
