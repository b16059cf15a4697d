"""The language server on stdio: the server, its feature handlers, and a bounded reader."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
from pathlib import Path
from typing import BinaryIO

import pygls.io_

from pi_event_search.lsp.handlers import register
from pi_event_search.lsp.server import PiEventServer

MAX_MESSAGE_BYTES = 128 << 20


class _BoundedStdin:
    """stdin for pygls' reader: a Content-Length beyond MAX_MESSAGE_BYTES is not allocated (that
    crashed the server with MemoryError/OverflowError); the body reads as unparseable, the client
    gets a parse error, and reading resumes at the next header line."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw

    def readline(self) -> bytes:
        return self.raw.readline()

    def read(self, n: int) -> bytes:
        return self.raw.read(n) if n <= MAX_MESSAGE_BYTES else b"\x00"


class _PipeReader:
    """pygls' AsyncReader over an asyncio pipe transport. pygls' own reader hands every header
    line and every body to an executor thread: about 40% of the CPU of a request that runs no SQL
    (`bench/report/history.py --area query-latency`). Same bound as _BoundedStdin on what a
    Content-Length may allocate."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        try:
            return await self.stream.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial
        except asyncio.LimitOverrunError:
            return await self._skip_line()

    async def _skip_line(self) -> bytes:
        """A header line longer than the buffer limit is dropped without being kept (pygls'
        reader would allocate it whole); it stays one non-empty header line, as it was."""
        while True:
            try:
                await self.stream.readuntil(b"\n")
                return b"X-Dropped-Overlong-Header: true\r\n"
            except asyncio.IncompleteReadError:
                return b""
            except asyncio.LimitOverrunError as exc:
                await self.stream.readexactly(exc.consumed)

    async def readexactly(self, n: int) -> bytes:
        if n > MAX_MESSAGE_BYTES:
            return b"\x00"
        try:
            return await self.stream.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            return exc.partial


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


async def _serve_pipe(server: PiEventServer, stop: threading.Event) -> None:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(limit=1 << 20, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), sys.stdin.buffer)
    await pygls.io_.run_async(stop_event=stop, reader=_PipeReader(stream),
                              protocol=server.protocol, logger=logging.getLogger("pygls.io_"),
                              error_handler=server.report_server_error)


def serve(index_path: Path | None, extra_dirs: list[str], session_dir: str | None = None) -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    server = PiEventServer(index_path, extra_dirs, session_dir)
    register(server)
    if not _is_pipe(sys.stdin.fileno()):  # a regular file: pygls' thread reader copes
        server.start_io(_BoundedStdin(sys.stdin.buffer))  # type: ignore[arg-type]
        return
    # What pygls' _start_io_async does, with _PipeReader in place of its thread-based reader.
    server._stop_event = stop = threading.Event()
    server.protocol.set_writer(pygls.io_.StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(_serve_pipe(server, stop))
    except BrokenPipeError:
        logging.getLogger(__name__).error("connection to the client lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
