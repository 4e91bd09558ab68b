"""``HttpStore`` and ``AsyncHttpStore`` over run seeds (CONTRACT.md 15): every seed method
once against a live server on each backend, answering what the in-process store answers,
and what cannot be sent refused before any request with the server's error."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
import pytest

from app.storage import SqlStore, create_engine
from runtime_store_client import (
    AsyncHttpStore,
    HistoryPrefix,
    HttpStore,
    InvalidArgumentError,
    InvalidTranscriptPositionError,
    LiteralPart,
    PreparationAbandonedError,
    PreparationOperation,
    PromptScope,
    RenderedPrompt,
    RunPreparation,
    RunSeed,
    SeedAppendResult,
    SeedConflictError,
    SeedDeclaration,
    SeedKind,
    SeedNotFoundError,
    SeedNotPublishedError,
    SeedPage,
    SeedRecord,
    StoreError,
)
from tests.conftest import LiveServer
from tests.contract.builders import run_start, started_record, uid

MESSAGES = b' [{"role":"user","parts":[{"kind":"text","text":"caf\xc3\xa9"}],"meta":null}] '
PROMPTS = (
    RenderedPrompt(prompt_id="p", version="1", scope=PromptScope(labels={"b": "2", "a": "1"})),
    RenderedPrompt(prompt_id="q", version="2"),
)


def _declaration(run_id: str, attempt_id: str = "att-1") -> SeedDeclaration:
    return SeedDeclaration(
        agent_id="agent-1",
        run_id=run_id,
        command_id="cmd-1",
        attempt_id=attempt_id,
        kind=SeedKind.LITERAL,
        rendered_prompts=PROMPTS,
    )


def _operation(run_id: str) -> PreparationOperation:
    return PreparationOperation(agent_id="agent-1", run_id=run_id, command_id="cmd-1")


CHAIN = [
    SeedRecord(key="h1", previous_id="0", messages=MESSAGES),
    SeedRecord(key="h2", previous_id="1", literal_part=LiteralPart(data=b'[{"ro', final=False)),
    SeedRecord(
        key="h3",
        previous_id="2",
        literal_part=LiteralPart(data=b'le":"user","parts":[],"meta":null}]', final=True),
    ),
    SeedRecord(key="p1", previous_id="3", prepared=b"\x00\xff compiled"),
]
PREPARED_BYTES = len(b"\x00\xff compiled")


def _stored(index: int) -> SeedRecord:
    return replace(CHAIN[index], id=str(index + 1))


def test_every_seed_method_of_http_store_answers_as_the_store(live_server: LiveServer) -> None:
    run_id = uid("run")
    with HttpStore(live_server.base_url) as store:
        declaration = _declaration(run_id)
        seed = store.begin_run_seed(declaration)
        assert seed == RunSeed(declaration=declaration, source=None, end_id="0")
        for index, record in enumerate(CHAIN):
            result = store.append_run_seed(run_id, "att-1", record)
            assert result == SeedAppendResult(id=str(index + 1), inserted=True)
        assert store.append_run_seed(run_id, "att-1", CHAIN[0]) == SeedAppendResult(
            id="1", inserted=False
        )
        assert store.find_run_preparation(_operation(run_id)) is None
        preparation = store.publish_run_seed(run_id, "att-1", "3", "4", PREPARED_BYTES)
        assert preparation == RunPreparation(
            seed=replace(seed, end_id="3"), end_id="4", prepared_bytes=PREPARED_BYTES
        )
        assert store.find_run_preparation(_operation(run_id)) == preparation
        assert store.settle_run_preparation(_operation(run_id), "att-2") == preparation
        assert store.load_run_seed(run_id, "3") == preparation.seed
        assert store.list_run_seed_records(run_id, "3") == SeedPage(
            records=[_stored(0), _stored(1), _stored(2)], next_cursor=""
        )
        assert store.list_run_seed_records(run_id, "3", after="1", limit=1) == SeedPage(
            records=[_stored(1)], next_cursor="2"
        )
        assert store.list_run_preparation_records(run_id, "4") == SeedPage(
            records=[_stored(3)], next_cursor=""
        )
        # The run starts with its seed; its meta names it.
        run = replace(run_start(run_id=run_id), seed_end_id="3")
        store.start_one_shot_run(run, started_record(run))
        assert store.load_run(run_id).seed_end_id == "3"
        assert store.search_runs(agent_id="agent-1").runs[0].seed_end_id == "3"
        # The same answers as the store in process.
        engine = create_engine(live_server.database_url)
        try:
            local = SqlStore(engine)
            assert local.load_run_seed(run_id, "3") == store.load_run_seed(run_id, "3")
            for list_records, end in (
                ("list_run_seed_records", "3"),
                ("list_run_preparation_records", "4"),
            ):
                assert getattr(local, list_records)(run_id, end) == getattr(store, list_records)(
                    run_id, end
                )
            assert local.load_run(run_id) == store.load_run(run_id)
        finally:
            engine.dispose()


def test_every_seed_method_of_async_http_store_answers_alike(live_server: LiveServer) -> None:
    run_id, other = uid("run"), uid("run")

    async def scenario() -> None:
        async with AsyncHttpStore(live_server.base_url) as store:
            declaration = _declaration(run_id)
            assert (await store.begin_run_seed(declaration)).end_id == "0"
            for record in CHAIN:
                assert (await store.append_run_seed(run_id, "att-1", record)).inserted
            preparation = await store.publish_run_seed(run_id, "att-1", "3", "4", PREPARED_BYTES)
            assert await store.find_run_preparation(_operation(run_id)) == preparation
            assert await store.settle_run_preparation(_operation(run_id), "x") == preparation
            assert await store.load_run_seed(run_id, "3") == preparation.seed
            page = await store.list_run_seed_records(run_id, "3", limit=2)
            assert page == SeedPage(records=[_stored(0), _stored(1)], next_cursor="2")
            page = await store.list_run_preparation_records(run_id, "4", after="")
            assert page.records == [_stored(3)]
            # Settling an attempt of an unpublished operation abandons it for ever.
            await store.begin_run_seed(_declaration(other))
            assert await store.settle_run_preparation(_operation(other), "att-1") is None
            with pytest.raises(PreparationAbandonedError) as info:
                await store.append_run_seed(other, "att-1", CHAIN[0])
            assert (info.value.status, info.value.run_id) == (409, other)

    asyncio.run(scenario())


def test_seed_problems_become_the_contract_errors(live_server: LiveServer) -> None:
    run_id = uid("run")
    with HttpStore(live_server.base_url) as store:
        with pytest.raises(SeedNotFoundError) as found:
            store.load_run_seed(run_id, "1")
        assert (found.value.code, found.value.status, found.value.run_id) == (
            "seed_not_found",
            404,
            run_id,
        )
        store.begin_run_seed(_declaration(run_id))
        with pytest.raises(SeedNotPublishedError) as published:
            store.list_run_seed_records(run_id, "1")
        assert (published.value.status, published.value.run_id) == (409, run_id)
        with pytest.raises(SeedConflictError) as conflict:
            store.append_run_seed(run_id, "att-1", replace(CHAIN[0], previous_id="5"))
        assert (conflict.value.status, conflict.value.run_id) == (409, run_id)
        with pytest.raises(InvalidArgumentError) as invalid:
            store.append_run_seed(run_id, "att-1", SeedRecord(key="k", previous_id="0"))
        assert invalid.value.run_id == run_id  # the path's: a validation problem of 15
        prefix = HistoryPrefix(run_id="r", end_id="1")
        with pytest.raises(SeedConflictError):  # a literal seed has no source
            store.append_run_seed(
                run_id, "att-1", SeedRecord(key="k", previous_id="0", prefix=prefix)
            )


# --- refused before any request ------------------------------------------------------------


#: Values of the wrong type, as a caller without a type checker may pass them.
NOT_A_LIST: Any = "p"
NOT_BYTES: Any = "x"


def _unsendable() -> list[tuple[str, Callable[[HttpStore], object], type[StoreError]]]:
    record = CHAIN[0]
    return [
        ("begin: empty run_id", lambda s: s.begin_run_seed(_declaration("")), InvalidArgumentError),
        (
            "begin: unknown kind",
            lambda s: s.begin_run_seed(replace(_declaration("r"), kind="resume")),  # type: ignore[arg-type]
            InvalidArgumentError,
        ),
        ("begin: not a declaration", lambda s: s.begin_run_seed("r"), InvalidArgumentError),  # type: ignore[arg-type]
        (
            "begin: prompts not a list",
            lambda s: s.begin_run_seed(replace(_declaration("r"), rendered_prompts=NOT_A_LIST)),
            InvalidArgumentError,
        ),
        (
            "append: empty run_id",
            lambda s: s.append_run_seed("", "a", record),
            InvalidArgumentError,
        ),
        (
            "append: empty attempt_id",
            lambda s: s.append_run_seed("r", "", record),
            InvalidArgumentError,
        ),
        (
            "append: messages not UTF-8",
            lambda s: s.append_run_seed("r", "a", replace(record, messages=b'["\xff"]')),
            InvalidArgumentError,
        ),
        (
            "append: prepared not bytes",
            lambda s: s.append_run_seed(
                "r", "a", SeedRecord(key="k", previous_id="0", prepared=NOT_BYTES)
            ),
            InvalidArgumentError,
        ),
        (
            "append: lone surrogate in the path",
            lambda s: s.append_run_seed("r-\ud800", "a", record),
            InvalidArgumentError,
        ),
        (
            "publish: prepared_bytes not an integer",
            lambda s: s.publish_run_seed("r", "a", "1", "2", "3"),  # type: ignore[arg-type]
            InvalidArgumentError,
        ),
        (
            "publish: prepared_bytes a boolean",
            lambda s: s.publish_run_seed("r", "a", "1", "2", True),
            InvalidArgumentError,
        ),
        (
            "settle: empty attempt_id",
            lambda s: s.settle_run_preparation(_operation("r"), ""),
            InvalidArgumentError,
        ),
        (
            "find: empty run_id",
            lambda s: s.find_run_preparation(_operation("")),
            InvalidArgumentError,
        ),
        ("load: empty run_id", lambda s: s.load_run_seed("", "1"), InvalidArgumentError),
        (
            "list: limit 0 before the empty run_id",
            lambda s: s.list_run_seed_records("", "1", limit=0),
            InvalidTranscriptPositionError,
        ),
        (
            "list: limit not an integer",
            lambda s: s.list_run_preparation_records("r", "1", limit="5"),  # type: ignore[arg-type]
            InvalidTranscriptPositionError,
        ),
        (
            "list: after not a string",
            lambda s: s.list_run_preparation_records("r", "1", after=1),  # type: ignore[arg-type]
            InvalidArgumentError,
        ),
    ]


UNSENDABLE = _unsendable()


@pytest.mark.parametrize("case", UNSENDABLE, ids=[case[0] for case in UNSENDABLE])
def test_what_cannot_be_sent_is_refused_before_any_request(
    case: tuple[str, Callable[[HttpStore], object], type[StoreError]],
) -> None:
    _, call, error = case
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    transport = httpx.MockTransport(handler)
    with (
        HttpStore("http://runtime-store.test", httpx_args={"transport": transport}) as store,
        pytest.raises(error) as info,
    ):
        call(store)
    assert type(info.value) is error
    assert info.value.status == error.default_status
    assert sent == []
