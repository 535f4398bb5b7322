"""Where a server process spends its busy time, by layer of the stack: py-spy samples of a
running worker, each busy sample put in one bucket.

    python -m bench.profile_layers --pid 12345 --seconds 10     # sample a worker, then bucket
    python -m bench.profile_layers --raw samples.txt            # bucket samples taken before

Sampling is py-spy's (``py-spy record -f raw``: one line per distinct stack, root first, with
its count). Threads waiting in the kernel are left out by py-spy, and threads parked in one
of threading's waits (which py-spy can take for busy) by this script; a thread that is ready
to run but waiting for a core counts as busy, so on a loaded machine the shares are of the
time the worker was running or wanted to. A sample goes to the layer of the innermost frame
that belongs to one: a frame of a library
with no layer of its own (pydantic, tiktoken, re, typing, …) counts for whoever called it, so
a pydantic validation that FastAPI asked for is FastAPI's and one that contextd asked for is
contextd's. The layers:

- asyncpg (its Python code; its protocol is Cython, which py-spy sees only with --native);
- SQLAlchemy ORM (``sqlalchemy/orm``, the async session) and SQLAlchemy Core (the rest:
  statement compilation and execution, result rows, the pool, the greenlet bridge);
- FastAPI (routing, dependency solving, validating and serialising);
- uvicorn and Starlette (the server, the HTTP protocol, middleware, responses);
- the service's own code (``app/`` for contextd, ``bench/`` for the bare stack);
- asyncio, uvloop, JSON, logging, metrics, tracing: the event loop and the instrumentation.
  A sample whose innermost Python frame is the event loop's own ``run`` is the loop running
  C code with no Python callback on the stack: uvloop's socket reads and writes, httptools'
  parsing and (without --native) asyncpg's Cython protocol;
- everything else.

Rerun it after a change to the hot path to see which layer moved; bench/wrk_load.py runs it
on a contextd worker under load with ``--profile``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

ASYNCPG = "asyncpg"
ORM = "SQLAlchemy ORM"
CORE = "SQLAlchemy Core"
FASTAPI = "FastAPI"
SERVER = "uvicorn and Starlette"
OWN = "the service's own code"
LOOP = "asyncio, uvloop, JSON, logging, metrics, tracing"
OTHER = "everything else"
LAYERS = (ASYNCPG, CORE, ORM, FASTAPI, SERVER, OWN, LOOP, OTHER)

_FRAME = re.compile(r"\((?P<path>.*):\d+\)$")
#: Path fragments, first match wins (the ORM before the rest of SQLAlchemy).
_BY_PATH: tuple[tuple[str, str], ...] = (
    ("asyncpg/", ASYNCPG),
    ("sqlalchemy/orm/", ORM),
    ("sqlalchemy/ext/asyncio/session.py", ORM),
    ("sqlalchemy/", CORE),
    ("fastapi/", FASTAPI),
    ("starlette/", SERVER),
    ("uvicorn/", SERVER),
    ("httptools/", SERVER),
    ("h11/", SERVER),
    ("uvloop/", LOOP),
    ("prometheus_client/", LOOP),
    ("opentelemetry/", LOOP),
    ("orjson/", LOOP),
)
_STANDARD_LIBRARY = re.compile(r"/lib/python3\.\d+/(?P<module>[^/]+)")
_LOOP_MODULES = {"asyncio", "json", "logging", "selectors"}
#: A thread parked in one of threading's waits (the log queue's listener, an idle pool
#: thread): py-spy can take it for a busy one, as the wait is a lock taken in a loop.
_PARKED = re.compile(
    r"^(Condition\.wait|Event\.wait|Semaphore\.acquire|Thread\.join|"
    r"Thread\._wait_for_tstate_lock) \(.*/threading\.py:\d+\)$"
)


def layer_of(frame: str, own: tuple[str, ...]) -> str | None:
    """The layer of one py-spy frame ("name (path:line)"), or None for a library with none."""
    match = _FRAME.search(frame)
    path = match.group("path") if match else frame
    if any(path.startswith(root) for root in own):
        return OWN
    for fragment, layer in _BY_PATH:
        if fragment in path:
            return layer
    standard = _STANDARD_LIBRARY.search(path)
    if standard and "site-packages" not in path:
        module = standard.group("module").removesuffix(".py")
        if module in _LOOP_MODULES:
            return LOOP
    return None


def own_roots(repo: Path = REPO) -> tuple[str, ...]:
    """Where the service's own code is: this checkout's app/ and bench/."""
    return (f"{repo / 'app'}/", f"{repo / 'bench'}/")


def bucket(raw: str, own: tuple[str, ...] | None = None) -> Counter[str]:
    """Busy samples by layer, from py-spy's raw output."""
    roots = own_roots() if own is None else own
    samples: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        if _PARKED.search(frames[-1]):
            continue
        chosen = OTHER
        for frame in reversed(frames):
            layer = layer_of(frame, roots)
            if layer is not None:
                chosen = layer
                break
        samples[chosen] += int(count)
    return samples


def table(samples: Counter[str]) -> str:
    total = sum(samples.values())
    lines = ["| where | busy samples | share |", "|---|---:|---:|"]
    for layer in sorted(LAYERS, key=lambda name: -samples[name]):
        share = samples[layer] / total if total else 0.0
        lines.append(f"| {layer} | {samples[layer]} | {share:.1%} |")
    lines.append(f"| **all busy samples** | {total} | 100% |")
    return "\n".join(lines)


def py_spy() -> str:
    found = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit(
            "py-spy is not installed: pip install py-spy (or the project's bench extra: "
            "pip install -e '.[bench]')"
        )
    return found


def record(
    pid: int, seconds: float, output: Path, *, rate: int = 250, native: bool = False
) -> subprocess.Popen[bytes]:
    """Start sampling ``pid`` for ``seconds`` into ``output`` (py-spy's raw format); the
    sampler's process, to wait for."""
    command = [
        py_spy(),
        "record",
        "--pid",
        str(pid),
        "--duration",
        str(max(1, round(seconds))),
        "--rate",
        str(rate),
        "--format",
        "raw",
        "--full-filenames",
        "--output",
        str(output),
    ]
    if native:
        command.append("--native")
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finish(sampler: subprocess.Popen[bytes], output: Path) -> str:
    """Wait for a sampler started by ``record``; the samples it wrote."""
    _, errors = sampler.communicate()
    if sampler.returncode != 0 or not output.exists():
        raise RuntimeError(f"py-spy failed ({sampler.returncode}): {errors.decode()[-2000:]}")
    return output.read_text()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--pid", type=int, help="a running worker to sample")
    source.add_argument("--raw", type=Path, help="py-spy raw output to bucket")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=int, default=250, help="samples a second")
    parser.add_argument("--native", action="store_true", help="C and Cython frames too")
    parser.add_argument("--keep", type=Path, help="where to keep the raw samples")
    args = parser.parse_args()
    if args.raw is not None:
        raw = args.raw.read_text()
    else:
        with tempfile.TemporaryDirectory() as folder:
            output = args.keep or Path(folder) / "samples.txt"
            raw = finish(
                record(args.pid, args.seconds, output, rate=args.rate, native=args.native),
                output,
            )
    print(table(bucket(raw)))  # noqa: T201


if __name__ == "__main__":
    main()
