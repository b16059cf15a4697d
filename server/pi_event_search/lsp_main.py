"""The language server on stdio: the server, its feature handlers, and a bounded reader."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import BinaryIO

from pi_event_search.handlers import register
from pi_event_search.server import PiEventServer

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


def serve(index_path: Path | None, extra_dirs: list[str]) -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    server = PiEventServer(index_path, extra_dirs)
    register(server)
    server.start_io(_BoundedStdin(sys.stdin.buffer))  # type: ignore[arg-type]
