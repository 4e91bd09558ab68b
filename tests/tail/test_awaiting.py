"""Helper tasks never outlive their starter (``app/awaiting.py``): a stream's or a wait's
waits are cancelled and awaited however it ends, its client going away included."""

from __future__ import annotations

import asyncio

import pytest

from app.awaiting import cancel_and_wait, first_of


def _others() -> set[asyncio.Task[object]]:
    return asyncio.all_tasks() - {asyncio.current_task()}


def test_a_cancelled_first_of_leaves_no_task_pending() -> None:
    async def scenario() -> None:
        woken, stopped = asyncio.Event(), asyncio.Event()
        waiting = asyncio.ensure_future(first_of(30, woken.wait(), stopped.wait()))
        await asyncio.sleep(0.01)
        waiting.cancel()  # the client went away
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert _others() == set()

    asyncio.run(scenario())


def test_first_of_returns_at_the_first_and_ends_the_others() -> None:
    async def scenario() -> None:
        woken, stopped = asyncio.Event(), asyncio.Event()
        asyncio.get_running_loop().call_later(0.01, woken.set)
        await first_of(30, woken.wait(), stopped.wait())
        assert _others() == set()

    asyncio.run(scenario())


def test_cancel_and_wait_waits_for_its_tasks_though_its_caller_is_cancelled_again() -> None:
    async def slow_to_end() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            for _ in range(5):  # a few loop turns of cleanup after the cancellation
                await asyncio.sleep(0)

    async def scenario() -> None:
        helper = asyncio.ensure_future(slow_to_end())
        await asyncio.sleep(0)
        caller = asyncio.ensure_future(cancel_and_wait(helper))
        for _ in range(3):  # as an anyio cancel scope does, at every await
            await asyncio.sleep(0)
            caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        assert helper.done()

    asyncio.run(scenario())
