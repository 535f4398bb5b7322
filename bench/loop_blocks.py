"""What holds a worker's event loop: py-spy samples of its main thread, in time order.

``Recording`` runs ``py-spy record --idle --threads --format speedscope`` on a server process
(py-spy from PyPI; it reads the process from outside, nothing in the server changes). With
``--idle`` every sample of the main thread is kept, one per tick, so the samples are a
timeline: a tick whose stack ends in the loop's wait for I/O is a free loop, any other tick is
the loop held (running Python code, or waiting for the GIL another thread holds). Runs of held
ticks are the stretches during which no other request on the worker could move.

A tick can be held because the loop's thread runs, or because it is ready to run and waits
for a core (a loaded machine) or for the GIL. The kernel tells the first two apart:
``/proc/<pid>/task/<tid>/schedstat`` gives a thread's time on a core and its time ready but
waiting for one; ``Recording`` reads it for every thread of the server at the start and the
end (``scheduling``).

``analyse`` reports those stretches (how many, how long) and puts each held tick under one
label, the first of ``LABELS`` whose marker a frame of its stack matches (innermost first), or
the innermost frame of contextd's code.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

#: What a held tick was doing: (label, markers matched against "function (file)" of each
#: frame, innermost first; the first label with a matching frame wins).
LABELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("waiting for the GIL / thread handoff", ("to_thread", "run_sync_in_worker_thread")),
    ("request body read", ("receive (", "_receive", "Request.body", "Request.json", "on_body")),
    ("body parse + validation", ("validate_json", "validate_python", "_validate", "loads (")),
    ("answer serialisation", ("serialize_response", "model_dump", "render (", "dumps (")),
    ("SQL compile", ("compile", "_compiler", "visit_")),
    ("JSON column encode/decode", ("dump_json", "load_json", "process (")),
    ("driver (asyncpg/sqlite)", ("asyncpg", "aiosqlite", "_execute", "executemany")),
    ("decision (pure core)", ("app/budget/", "app/context/")),
    ("turn service", ("app/turns/",)),
)
#: The innermost frames of a free loop: uvloop's wait is C code (the stack ends in the call
#: that runs the loop), asyncio's is the selector's.
IDLE_LEAVES = ("Runner.run (", "run_until_complete (", "run_forever (", "select (", "poll (")


class Recording:
    """``with Recording(pid, rate) as recording:`` samples ``pid`` until the block ends;
    ``recording.path`` then holds the speedscope file."""

    def __init__(self, pid: int, rate: int = 200, folder: Path | None = None) -> None:
        self.pid = pid
        self.rate = rate
        where = folder or Path(tempfile.mkdtemp(prefix="loop-blocks-"))
        self.path = where / f"py-spy-{pid}.json"
        self.process: subprocess.Popen[bytes] | None = None
        self._started: dict[str, tuple[int, int]] = {}
        #: Seconds each thread of the server (by name; the event loop's is "main") spent on
        #: a core, and ready to run but waiting for one, while the recording ran.
        self.scheduling: dict[str, tuple[float, float]] = {}

    def _threads(self) -> dict[str, tuple[int, int]]:
        threads: dict[str, tuple[int, int]] = {}
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                name = (task / "comm").read_text().strip()
                running, waiting, _ = (task / "schedstat").read_text().split()
            except (OSError, ValueError):
                continue
            key = "main" if task.name == str(self.pid) else f"{name} {task.name}"
            threads[key] = (int(running), int(waiting))
        return threads

    def __enter__(self) -> Recording:
        self._started = self._threads()
        self.process = subprocess.Popen(
            [
                "py-spy", "record", "--pid", str(self.pid), "--rate", str(self.rate),
                "--idle", "--threads", "--nonblocking", "--format", "speedscope",
                "--output", str(self.path),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        return self

    def __exit__(self, *_: object) -> None:
        ended = self._threads()
        for key, (running, waiting) in ended.items():
            before = self._started.get(key, (0, 0))
            self.scheduling[key] = ((running - before[0]) / 1e9, (waiting - before[1]) / 1e9)
        if self.process is not None and self.process.poll() is None:
            # SIGINT: py-spy writes what it sampled and exits.
            self.process.send_signal(2)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _frame_text(frame: dict[str, Any]) -> str:
    return f"{frame['name']} ({frame['file']})"


def _label(stack: list[str]) -> str:
    for label, markers in LABELS:
        if any(marker in frame for frame in stack for marker in markers):
            return label
    for frame in stack:
        if "/app/" in frame:
            return frame.split(" (")[0] + " (contextd, other)"
    return stack[0].split(" (")[0] + " (libraries)" if stack else "?"


def analyse(path: Path, rate: int, top: int = 12) -> dict[str, Any]:
    """The main thread's held ticks: stretches and labels (see the module's docstring)."""
    document = json.loads(path.read_text())
    frames = [_frame_text(frame) for frame in document["shared"]["frames"]]
    main = next(p for p in document["profiles"] if "MainThread" in p["name"])
    tick_ms = 1000 / rate
    held: list[bool] = []
    labels: Counter[str] = Counter()
    # The innermost frame of contextd's code, and the one below it (what it called).
    places: Counter[str] = Counter()
    long_labels: Counter[str] = Counter()
    stretches: list[int] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            stretches.append(len(run))
            if len(run) * tick_ms >= 50:
                long_labels.update(run)
            run.clear()

    for sample in main["samples"]:
        stack = [frames[index] for index in reversed(sample)]  # innermost first
        leaf = stack[0] if stack else ""
        idle = not stack or any(leaf.startswith(name) for name in IDLE_LEAVES)
        held.append(not idle)
        if idle:
            close_run()
            continue
        label = _label(stack)
        labels[label] += 1
        ours = next((i for i, frame in enumerate(stack) if "/app/" in frame), None)
        if ours is not None:
            callee = stack[ours - 1].split(" (")[0] if ours else "-"
            places[f"{stack[ours].split(' (')[0]} > {callee}"] += 1
        run.append(label)
    close_run()
    held_ticks = sum(held)
    lengths_ms = sorted(length * tick_ms for length in stretches)
    return {
        "seconds": len(held) * tick_ms / 1000,
        "held_share": held_ticks / max(len(held), 1),
        "stretches_over_50ms": sum(1 for ms in lengths_ms if ms >= 50),
        "stretches_over_100ms": sum(1 for ms in lengths_ms if ms >= 100),
        "longest_ms": lengths_ms[-5:][::-1],
        "held_ms_by_label": {label: count * tick_ms for label, count in labels.most_common(top)},
        "held_ms_in_50ms_stretches_by_label": {
            label: count * tick_ms for label, count in long_labels.most_common(top)
        },
        "held_ms_by_place": {
            place: count * tick_ms for place, count in places.most_common(top * 2)
        },
    }


def scheduling_report(scheduling: dict[str, tuple[float, float]]) -> str:
    """The event loop's thread and the others: seconds on a core, seconds waiting for one."""
    main = scheduling.get("main", (0.0, 0.0))
    others = [times for key, times in scheduling.items() if key != "main"]
    return (
        f"  the event loop's thread: {main[0]:.1f} s on a core, {main[1]:.1f} s ready but "
        f"waiting for a core; the worker's other threads: {sum(t[0] for t in others):.1f} s "
        f"on a core, {sum(t[1] for t in others):.1f} s waiting"
    )


def report(figures: dict[str, Any]) -> str:
    lines = [
        f"  the worker's event loop over {figures['seconds']:.0f} s: held "
        f"{figures['held_share']:.0%} of the time; stretches held >= 50 ms: "
        f"{figures['stretches_over_50ms']}, >= 100 ms: {figures['stretches_over_100ms']}; "
        f"longest (ms): {', '.join(f'{ms:.0f}' for ms in figures['longest_ms'])}",
        f"  {'held by':48} {'all (ms)':>9} {'in >=50 ms stretches':>21}",
    ]
    long = figures["held_ms_in_50ms_stretches_by_label"]
    for label, ms in figures["held_ms_by_label"].items():
        lines.append(f"  {label[:48]:48} {ms:>9.0f} {long.get(label, 0):>21.0f}")
    lines.append("  held in contextd's code (innermost frame > what it called), ms:")
    for place, ms in figures["held_ms_by_place"].items():
        lines.append(f"    {ms:>7.0f}  {place}")
    return "\n".join(lines)
