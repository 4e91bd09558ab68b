"""Helper tasks that never outlive the code that started them.

A task left pending when its starter returns or is cancelled (a client that went away
cancels its request) is garbage collected later, and asyncio logs "Task was destroyed but
it is pending!" at ERROR. Every helper task of the service is cancelled and awaited on
every exit path, through these two functions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any


async def cancel_and_wait(*tasks: asyncio.Future[Any]) -> None:
    """Cancel ``tasks`` and wait until each has ended. A cancellation of the caller while
    it waits (anyio cancel scopes cancel again at every ``await``) is raised once they
    have, so none is left pending."""
    for task in tasks:
        task.cancel()
    cancelled: asyncio.CancelledError | None = None
    while not all(task.done() for task in tasks):
        try:
            await asyncio.wait(tasks)
        except asyncio.CancelledError as exc:
            cancelled = exc
    if cancelled is not None:
        raise cancelled


async def first_of(timeout: float, *awaitables: Awaitable[object]) -> None:
    """Until the first of ``awaitables`` completes (its error, if it failed, is raised),
    or ``timeout`` seconds. Each runs as a task, cancelled and awaited when this returns
    or is cancelled."""
    tasks = [asyncio.ensure_future(awaitable) for awaitable in awaitables]
    try:
        done, _ = await asyncio.wait(tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()
    finally:
        await cancel_and_wait(*tasks)
