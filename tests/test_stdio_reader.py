"""The stdio transport: a pipe is read by our asyncio reader (lsp_main._PipeReader), a regular file
by pygls' own thread reader; both answer the same frames. And the pygls function we drive."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import IO

import pygls.io_

from support import PiHome


def _frame(msg: dict[str, object]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _opening(root: str) -> bytes:
    return b"".join([
        _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {},
                           "workspaceFolders": [{"uri": Path(root).as_uri(), "name": "w"}],
                           "initializationOptions": {"watch": False}}}),
        _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        b"Content-Length: 5\r\n",  # a frame with an extra header line longer than any buffer
        b"X-Junk: " + b"j" * (2 << 20) + b"\r\n\r\n{}{}{",
        _frame({"jsonrpc": "2.0", "id": 2, "method": "piEvents/search",
                "params": {"query": "zzqqxx"}}),
    ])


CLOSING = (_frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
           + _frame({"jsonrpc": "2.0", "method": "exit"}))


def _answers(out: bytes) -> dict[int, object]:
    answers: dict[int, object] = {}
    for part in out.split(b"Content-Length: ")[1:]:
        _, _, body = part.partition(b"\r\n\r\n")
        msg = json.loads(body)
        if "id" in msg and ("result" in msg or "error" in msg) and "method" not in msg:
            answers[msg["id"]] = msg.get("result", msg.get("error"))
    return answers


def _start(pi_home: PiHome, stdin: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "pi_event_search", "serve"], stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=pi_home.env())


def _read_until_answer(out: IO[bytes], wanted: int) -> bytes:
    seen = b""
    while wanted not in _answers(seen):
        chunk = out.read1(1 << 16)
        assert chunk, "the server closed its output"
        seen += chunk
    return seen


def test_pipe_reader_answers_around_an_overlong_header(pi_home: PiHome, tmp_path: Path) -> None:
    proc = _start(pi_home, subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_opening(str(tmp_path)))
    proc.stdin.flush()
    seen = _read_until_answer(proc.stdout, 2)
    rest, err = proc.communicate(CLOSING, timeout=120)
    assert proc.returncode == 0, err.decode()[-2000:]
    answers = _answers(seen + rest)
    assert set(answers) == {None, 1, 2, 3}  # None: the malformed body's parse error
    # `indexing` says whether the first pass had ended when the search was answered
    assert {k: v for k, v in answers[2].items() if k != "indexing"} == {
        "hits": [], "nextCursor": None, "didYouMean": None}


def test_file_stdin_is_read_by_pygls(pi_home: PiHome, tmp_path: Path) -> None:
    frames = tmp_path / "frames.bin"
    frames.write_bytes(_opening(str(tmp_path)).rsplit(b"Content-Length: ", 1)[0] + CLOSING)
    with frames.open("rb") as fh:
        proc = _start(pi_home, fh)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert set(_answers(out)) == {None, 1, 3}


def test_run_async_takes_what_lsp_main_passes() -> None:
    params = inspect.signature(pygls.io_.run_async).parameters
    assert list(params) == ["stop_event", "reader", "protocol", "logger", "error_handler"]
    assert hasattr(pygls.io_, "StdoutWriter")
