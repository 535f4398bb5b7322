"""An ASGI app served by uvicorn on a free port of 127.0.0.1, in a thread of its own: for the
fake providers, the trace collector, and contextd itself where a client must reach it over a
real socket (an SDK that builds its own HTTP client)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import uvicorn


@contextmanager
def serve_in_thread(
    app: Any,
    *,
    lifespan: Literal["auto", "on", "off"] = "off",
    force_exit: bool = False,
    **config: Any,
) -> Iterator[str]:
    """Serve ``app`` until the block ends; yields its root URL (``http://127.0.0.1:PORT``).
    ``force_exit`` ends open connections (a stream held by a test) without waiting for them;
    ``config`` goes to ``uvicorn.Config``."""
    settings: dict[str, Any] = {"log_level": "warning", **config}
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, lifespan=lifespan, **settings)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        server.force_exit = force_exit
        thread.join(timeout=30)
