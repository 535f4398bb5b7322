"""A TCP proxy in front of the database that a test (or a benchmark) can cut and restore,
so that an outage is made without touching the database server itself."""

from __future__ import annotations

import asyncio
import contextlib


class CuttableProxy:
    """Forwards 127.0.0.1:<port> to ``target``. ``cut()`` drops every open connection and
    refuses new ones until ``restore()``."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.cuts = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._refusing = False
        self._pipes: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    def cut(self) -> None:
        self.cuts += 1
        self._drop_all()

    def _drop_all(self) -> None:
        self._refusing = True
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    def restore(self) -> None:
        self._refusing = False

    async def close(self) -> None:
        self._drop_all()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for pipe in list(self._pipes):
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    async def _accept(
        self, client_reader: asyncio.StreamReader, client: asyncio.StreamWriter
    ) -> None:
        if self._refusing:
            client.transport.abort()
            return
        try:
            server_reader, server = await asyncio.open_connection(*self.target)
        except OSError:
            client.transport.abort()
            return
        if self._refusing:  # cut while connecting
            client.transport.abort()
            server.transport.abort()
            return
        self._open.update((client, server))
        for source, sink in ((client_reader, server), (server_reader, client)):
            pipe = asyncio.create_task(self._pipe(source, sink))
            self._pipes.add(pipe)
            pipe.add_done_callback(self._pipes.discard)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self._open.discard(sink)
            with contextlib.suppress(OSError):
                sink.close()
