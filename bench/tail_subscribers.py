"""Subscribers of the live-tail benchmark, in a process of their own (``bench/tail.py``).

``python -m bench.tail_subscribers URL PATH COUNT`` opens ``COUNT`` streams of ``PATH``
on one event loop, prints ``ready`` once every stream has delivered its first record,
and at the end of the streams prints one JSON object: for each record ID, the
``time.monotonic()`` of each delivery (comparable with the writer's: one machine clock).
With ``--idle``, ``PATH`` is several paths joined by ``|``: it opens one stream of each,
prints ``ready`` once they are open and holds them until stdin closes. The token, if the
service requires one, comes in ``RUNTIME_STORE_TOKEN`` (as the operator commands take it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

import httpx
from httpx_sse import EventSource

from bench.auth import TOKEN_ENV, headers


async def _follow(
    client: httpx.AsyncClient, path: str, arrivals: dict[str, list[float]], first: asyncio.Event
) -> None:
    async with client.stream("GET", path, headers={"Accept": "text/event-stream"}) as response:
        response.raise_for_status()
        async for event in EventSource(response).aiter_sse():
            if event.event == "record":
                arrivals.setdefault(event.id, []).append(time.monotonic())
                first.set()
            elif event.event == "end":
                return


async def _hold(client: httpx.AsyncClient, path: str, opened: asyncio.Event) -> None:
    async with client.stream("GET", path) as response:
        response.raise_for_status()
        opened.set()
        async for _ in response.aiter_bytes():
            pass


async def main(url: str, path: str, count: int, idle: bool) -> None:
    limits = httpx.Limits(max_connections=count + 10)
    timeout = httpx.Timeout(30, read=None)
    sent = headers(os.environ.get(TOKEN_ENV))
    async with httpx.AsyncClient(
        base_url=url, limits=limits, timeout=timeout, headers=sent
    ) as client:
        if idle:
            paths = path.split("|")
            opened = [asyncio.Event() for _ in paths]
            tasks = [
                asyncio.create_task(_hold(client, one, event))
                for one, event in zip(paths, opened, strict=True)
            ]
            await asyncio.gather(*(event.wait() for event in opened))
            print("ready", flush=True)
            await asyncio.to_thread(sys.stdin.read)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            return
        arrivals: dict[str, list[float]] = {}
        firsts = [asyncio.Event() for _ in range(count)]
        tasks = [asyncio.create_task(_follow(client, path, arrivals, first)) for first in firsts]
        await asyncio.gather(*(first.wait() for first in firsts))
        print("ready", flush=True)
        await asyncio.gather(*tasks)
        print(json.dumps(arrivals), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("path", help="stream path (with --idle: paths joined by |)")
    parser.add_argument("count", type=int)
    parser.add_argument("--idle", action="store_true")
    args = parser.parse_args()
    asyncio.run(main(args.url, args.path, args.count, args.idle))
