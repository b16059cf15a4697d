"""The language server keeps a reference to every task it starts: the event loop holds tasks only
weakly, so a task nobody references may be collected before it finishes."""

from __future__ import annotations

import asyncio
import gc

from lsprotocol import types as t

from pi_event_search.lsp.handlers import register
from pi_event_search.lsp.server import PiEventServer


async def test_initialized_keeps_its_background_task(pi_home):
    ls = PiEventServer(pi_home.index, [])
    register(ls)
    ls.apply_settings({"watch": False})
    await ls.protocol.fm.features[t.INITIALIZED](t.InitializedParams())  # bound to ls by pygls
    gc.collect()
    task = ls.background
    assert isinstance(task, asyncio.Task), "the first index pass runs in a task nobody holds"
    # The pass itself logs its failures (here: no client to report progress to). A server that
    # does not watch then frees the writer lease and follows the index until it stops.
    for _ in range(600):
        engine = ls.engine
        if engine is not None and not engine.writer and not ls.indexing \
                and (engine.indexing() is None or ls.engine_error is not None):
            break
        await asyncio.sleep(0.05)
    assert not task.done() and ls.engine is not None and not ls.engine.writer
    ls.stop_watch.set()
    await asyncio.wait_for(task, 10)
    assert task.done() and not task.cancelled()
    assert ls.engine is not None
    ls.engine.close()
