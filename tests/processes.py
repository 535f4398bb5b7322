"""Real ``contextd serve`` processes on free ports of 127.0.0.1, for tests and benchmarks
that need more than one worker."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_LISTENING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


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
    """One ``contextd serve --port 0``; its output goes to ``log`` (a pipe would fill up)."""

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
                [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", "0"],
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
