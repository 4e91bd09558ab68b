"""The console's transcript view of a seeded run (CONTRACT.md 15.6): the first page shows the
history the run inherits from its seed under a marker naming the seed and its source run,
numbered with the run's own messages as one history; later pages show the run's own."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Iterator
from html import unescape
from typing import ClassVar

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

import runtime_store_client.http as client_http
from app.main import create_app
from app.settings import Settings
from app.storage import SqlStore
from runtime_store_client import (
    TRANSCRIPT_MESSAGES_APPENDED,
    LiteralPart,
    RunMeta,
    RunSeed,
    SeedPage,
    encode_messages,
)
from tests.contract.builders import new_session, record
from tests.transcript.samples import assistant, result, system, text, use, user
from tests.transcript.seeding import complete, new_id, next_turn, publish_seed, say, start_run


class _ReadsSeeds(client_http.AsyncHttpStore):
    """The console's client, reading seeds in process: a stand-in used only while the HTTP
    client has no seed reads of its own (CONTRACT.md 15.8); the console's code is the same."""

    reader: ClassVar[SqlStore]

    async def load_run(self, run_id: str) -> RunMeta:
        meta = await super().load_run(run_id)
        stored = await asyncio.to_thread(self.reader.load_run, run_id)
        return dataclasses.replace(meta, seed_end_id=stored.seed_end_id)

    async def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed:
        return await asyncio.to_thread(self.reader.load_run_seed, run_id, seed_end_id)

    async def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage:
        return await asyncio.to_thread(
            self.reader.list_run_seed_records, run_id, seed_end_id, after, limit
        )


@pytest.fixture
def console(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    if not hasattr(client_http.AsyncHttpStore, "list_run_seed_records"):
        _ReadsSeeds.reader = SqlStore(engine)
        monkeypatch.setattr(client_http, "AsyncHttpStore", _ReadsSeeds)
    url = engine.url.render_as_string(hide_password=False)
    with TestClient(create_app(Settings(database_url=url))) as client:
        yield client


def _fragment(console: TestClient, run_id: str, **params: str) -> str:
    response = console.get("/console/fragments/run/transcript", params={"run_id": run_id, **params})
    html: str = response.text
    assert response.status_code == 200, html
    return html


def _inherited(html: str) -> str:
    found = re.search(r'<section class="inherited".*?</section>', html, re.S)
    return found[0] if found else ""


def _indexes(html: str) -> list[int]:
    return [int(index) for index in re.findall(r'data-index="(\d+)"', html)]


def _next(html: str) -> str:
    found = re.search(r'<a href="([^"]+)" rel="next">', html)
    return unescape(found[1]) if found else ""


def test_a_next_turn_shows_its_inherited_history_first(engine: Engine, console: TestClient) -> None:
    store = SqlStore(engine)
    session_id = new_session(store).id
    first = start_run(store, session_id)
    say(store, first, system(text("Be brief.")), user(text("turn 1")))
    say(store, first, assistant(use("toolu_1")))
    complete(store, first)
    second = next_turn(store, session_id, first, [], [user(result("toolu_1"))])
    say(store, second, assistant(text("answer 2")))

    html = _fragment(console, second.run_id)

    section = _inherited(html)
    assert 'data-inherited="3"' in section  # the system message is left out (next_turn)
    assert 'data-seed-kind="next_turn"' in section
    assert 'inherited from run <a class="id"' in section
    assert f">{first.run_id}</a>" in section
    assert unescape(re.findall(r'href="([^"]+)"', section)[0]) == (
        f"/console/run/transcript?run_id={first.run_id}"
    )
    assert _indexes(section) == [0, 1, 2]
    assert "turn 1" in section
    assert "Be brief." not in html
    # The run's own messages follow, numbered on.
    assert _indexes(html) == [0, 1, 2, 3]
    assert "answer 2" in html.split("</section>")[-1]
    # A call inherited from the seed is paired with its result, and the composed history
    # is valid for the planner.
    assert '<a href="#message-2">message 2</a>' in section
    assert re.search(
        r'data-check="planner">\s*<strong>Planner rules:</strong>\s*<span class="ok">', html
    )


def test_later_pages_number_on_without_the_seed(engine: Engine, console: TestClient) -> None:
    store = SqlStore(engine)
    run_id = new_id("run")
    seeded = publish_seed(store, run_id, [[user(text("seeded 0")), assistant(text("seeded 1"))]])
    run = start_run(store, "", run_id=run_id, seed_end_id=seeded.seed_end_id)
    store.append_run_records(
        run.run_id,
        [
            record(
                run,
                event_key=f"said-{n}",
                type=TRANSCRIPT_MESSAGES_APPENDED,
                payload=encode_messages([user(text(f"own {n}"))]),
            )
            for n in range(105)
        ],
    )
    html = _fragment(console, run.run_id)
    assert "literal history" in _inherited(html)
    assert 'data-seed-kind="literal"' in html
    assert _indexes(html) == list(range(2 + 100))
    following = _next(html)
    assert "offset=102" in following
    params = dict(part.split("=", 1) for part in following.split("?", 1)[1].split("&"))
    later = _fragment(console, run.run_id, **{k: v for k, v in params.items() if k != "run_id"})
    assert _inherited(later) == ""
    assert _indexes(later) == list(range(102, 107))


def test_a_literal_in_parts_shows_as_its_messages(engine: Engine, console: TestClient) -> None:
    store = SqlStore(engine)
    run_id = new_id("run")
    data = encode_messages([user(text("日本"))])
    cut = data.index("本".encode()) + 2
    seeded = publish_seed(
        store,
        run_id,
        [LiteralPart(data=data[:cut], final=False), LiteralPart(data=data[cut:], final=True)],
    )
    run = start_run(store, "", run_id=run_id, seed_end_id=seeded.seed_end_id)
    section = _inherited(_fragment(console, run.run_id))
    assert 'data-inherited="1"' in section
    assert "日本" in section


def test_a_run_without_a_seed_shows_no_marker(engine: Engine, console: TestClient) -> None:
    store = SqlStore(engine)
    run = start_run(store, new_session(store).id)
    say(store, run, user(text("hello")))
    html = _fragment(console, run.run_id)
    assert _inherited(html) == ""
    assert "Seed" not in html
    assert _indexes(html) == [0]
