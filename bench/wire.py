"""A minimal keep-alive HTTP/1.1 JSON client on asyncio streams.

The latency and load benchmarks time requests to a server on loopback; a general-purpose
client (httpx) adds about a millisecond of its own per request, which would hide the
service's. This one writes the request, reads the status line, headers and body, and does
nothing else. The body is parsed only when asked, outside the timed part.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import urlsplit


class Response:
    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One persistent connection to ``base_url`` (http://host:port). Not for concurrent use:
    one connection per virtual client."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _streams(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        return self._reader, self._writer

    async def request(self, method: str, path: str, body: Any = None) -> Response:
        reader, writer = await self._streams()
        payload = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        )
        writer.write(head.encode() + payload)
        await writer.drain()
        try:
            return await self._read(reader)
        except (asyncio.IncompleteReadError, ConnectionError):
            await self.close()
            raise

    async def _read(self, reader: asyncio.StreamReader) -> Response:
        header = await reader.readuntil(b"\r\n\r\n")
        lines = header.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        fields = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                fields[name.strip().lower()] = value.strip()
        if fields.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunks.append(await reader.readexactly(size + 2))
                if size == 0:
                    break
            body = b"".join(chunk[:-2] for chunk in chunks)
        else:
            body = await reader.readexactly(int(fields.get("content-length", "0")))
        if fields.get("connection", "").lower() == "close":
            await self.close()
        return Response(status, body)

    async def reconnect(self) -> None:
        """A new connection, opened now: outside a timed part, and never one the server may
        have closed for idling past its keep-alive timeout (uvicorn's is 5 s)."""
        await self.close()
        await self._streams()

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(ConnectionError):
                await self._writer.wait_closed()
        self._reader = self._writer = None
