"""A read's window and neighbour bounds are checked in one place: the CLI and the language
server reject the same bad window with the same message."""

from __future__ import annotations

import pytest

from builder import sample_session
from engine_support import ALL, cli, engine
from pi_event_search.core.errors import EngineError
from pi_event_search.lsp.params import BadParams, read_params


def _server_error(e, ref: str, **params) -> str:
    """What piEvents/read does with its params: validate them, then read."""
    try:
        p = read_params({"ref": ref, **params})
        e.read(p.ref, ALL, fragment=p.fragment, offset=p.offset, length=p.length,
               before=p.before, after=p.after, order=p.order)
    except (BadParams, EngineError) as exc:
        return str(exc)
    raise AssertionError("accepted")


@pytest.mark.parametrize(("flag", "value"), [
    ("length", 0), ("length", 100_001), ("offset", -1), ("before", 51), ("after", -1),
])
def test_cli_and_server_reject_a_bad_window_alike(pi_home, flag, value):
    sb = sample_session(pi_home.sessions, "/p")
    e = engine(pi_home.index)
    e.refresh()
    ref = f"{sb.session_id}/{sb.ids[2]}"
    rc, _, err = cli("read", ref, "--all", f"--{flag}={value}")
    assert rc == 1
    message = _server_error(e, ref, **{flag: value})
    assert err.strip() == f"pi-event-search: {message}"
    assert flag in message
