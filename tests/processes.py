"""Real ``contextd serve`` processes on free ports of 127.0.0.1, for tests and benchmarks
that need more than one worker."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_LISTENING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")
#: ``FIRST-LAST``: the ports servers started here may take (a machine that reserves a range
#: for benchmarks); unset, the system picks any free port.
PORTS_VARIABLE = "CONTEXTD_BENCH_PORTS"
#: Ports handed out by this process: a server given one may not be listening yet.
_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now: the first free one of the range
    ``CONTEXTD_BENCH_PORTS`` names, or any the system gives (0 lets the server pick)."""
    allowed = os.environ.get(PORTS_VARIABLE, "")
    if not allowed:
        return 0
    first, _, last = allowed.partition("-")
    for port in range(int(first), int(last or first) + 1):
        if port in _HANDED_OUT:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    raise RuntimeError(f"no free port in {PORTS_VARIABLE}={allowed}")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Ask a server to stop (SIGTERM: a graceful shutdown), and kill it if it will not."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class ServerProcess:
    """One ``contextd serve`` on a free port (:func:`free_port`); its output goes to ``log``
    (a pipe would fill up)."""

    def __init__(
        self, database_url: str, log: Path, *, checkout: Path = REPO, **settings: str
    ) -> None:
        # ``checkout``: the source tree whose code serves (another checkout, for before/after).
        environment = {
            **os.environ,
            **({} if checkout == REPO else {"PYTHONPATH": str(checkout)}),
            "CONTEXTD_DATABASE_URL": database_url,
            **{f"CONTEXTD_{name.upper()}": value for name, value in settings.items()},
        }
        self.log = log
        with log.open("wb") as output:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "app",
                    "serve",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(free_port()),
                ],
                env=environment,
                cwd=checkout,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        self.url = ""

    def ready(self, timeout: float = 60.0) -> str:
        """Wait for the server to listen; its base URL. (Blocking: from async code, call it
        through ``asyncio.to_thread``.)"""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = _LISTENING.search(self.log.read_text(errors="replace"))
            if match:
                self.url = f"http://127.0.0.1:{match.group(1)}"
                return self.url
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"contextd did not start:\n{self.log.read_text(errors='replace')}")

    def stop(self) -> None:
        stop_process(self.process)
