"""Run seeds and preparations (CONTRACT.md 15.2-15.4, 15.8): begin, append, publish and
settle an attempt (``worker``), find a preparation and read a published seed (``reader``).

Every problem of these routes carries the path's run ID. The byte limits count the
canonical encoding of the command, never the body as sent (15.1): the store measures them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Final

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import WithJsonSchema
from pydantic_core import to_json

from app.api.auth import READ, WRITE
from app.api.deps import ExactSegment, services
from app.api.examples import (
    SEED_AGENT_EXAMPLE,
    SEED_ATTEMPT_EXAMPLE,
    SEED_COMMAND_EXAMPLE,
    SEED_END_EXAMPLE,
    SEED_HISTORY_END_EXAMPLE,
    SEED_RUN_EXAMPLE,
)
from app.api.problem_docs import problems
from app.api.problems import SEEDS_TAG
from app.api.schemas.seeds import (
    AppendRunSeedRequest,
    BeginRunSeedRequest,
    PreparationAnswerBody,
    PublishRunSeedRequest,
    RunPreparationBody,
    RunSeedBody,
    SeedAppendResultBody,
    SeedPageBody,
    SettleRunPreparationRequest,
    append_result_json,
    preparation_answer_json,
    preparation_json,
    run_seed_json,
    seed_page_json,
)
from runtime_store_client import (
    InvalidArgumentError,
    InvalidTranscriptPositionError,
    PreparationAbandonedError,
    PreparationOperation,
    RunConflictError,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    SeedConflictError,
    SeedNotFoundError,
    SeedNotPublishedError,
    SessionNotFoundError,
    SessionPurgedError,
    StoreError,
)

#: Tagged ``seeds``: their validation problems carry the path's run ID too (problems.py).
router = APIRouter(prefix="/v1/runs", tags=[SEEDS_TAG])

SeedRunIdPath = Annotated[
    str,
    Path(description="The run ID the seed prepares.", examples=[SEED_RUN_EXAMPLE]),
    ExactSegment,
]
AttemptIdPath = Annotated[
    str,
    Path(description="The attempt ID, chosen by the caller.", examples=[SEED_ATTEMPT_EXAMPLE]),
    ExactSegment,
]
AfterQuery = Annotated[
    str,
    Query(
        description='"" to read from the start, or the ID of a record of the listed range '
        "(the previous page's `next_cursor`)."
    ),
]
#: A page's ``limit`` (15.4): any text, so that one that is no integer of at least 1 is
#: ``invalid_transcript_position``, checked first (``_limit``), not a validation error.
SeedLimitQuery = Annotated[
    str | int,
    Query(
        description="Records per page, an integer of at least 1 (else "
        "`invalid_transcript_position`); above 512 it is served as 512. A page also ends "
        "before the record that would pass 1,048,576 bytes."
    ),
    WithJsonSchema({"type": "integer", "default": 100}),
]
#: An integer in JSON syntax (RFC 8259: no leading zero, no sign but a leading minus).
_INTEGER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)")
#: More digits than any page needs: the store serves at most 512 records.
_LIMIT_DIGITS: Final = 9


def _limit(value: str | int) -> int:
    """The ``limit`` query as an integer; text that is none is ``invalid_transcript_position``
    (the store refuses one below 1 the same way)."""
    if isinstance(value, int):
        return value
    if not _INTEGER.fullmatch(value):
        raise InvalidTranscriptPositionError(f"limit must be an integer of at least 1: {value!r}")
    if len(value.lstrip("-")) > _LIMIT_DIGITS:
        return -1 if value.startswith("-") else 10**_LIMIT_DIGITS
    return int(value)


@contextmanager
def naming(run_id: str) -> Iterator[None]:
    """Problems of section 15 carry the run ID (15.8): the path's, where the store's error
    names none (a validation rule)."""
    try:
        yield
    except StoreError as exc:
        if not exc.run_id:
            exc.run_id = run_id
        raise


def _json(value: Any) -> Response:
    return Response(content=to_json(value), media_type="application/json")


def _same_run(path_run_id: str, body_run_id: str, what: str) -> None:
    if body_run_id != path_run_id:
        raise InvalidArgumentError(
            f"{what} {body_run_id!r} must equal the path's run ID {path_run_id!r}",
            run_id=path_run_id,
        )


_ATTEMPT_PROBLEMS = (
    SessionPurgedError,
    SeedNotFoundError,
    PreparationAbandonedError,
    SeedConflictError,
)
_READ_PROBLEMS = (SessionPurgedError, SeedNotFoundError, SeedNotPublishedError, SeedConflictError)


@router.post(
    "/{run_id}/seed/attempts",
    dependencies=[WRITE],
    response_model=RunSeedBody,
    operation_id="begin-run-seed",
    summary="Begin a seed attempt",
    responses=problems(
        SessionPurgedError,
        SessionNotFoundError,
        SeedConflictError,
        PreparationAbandonedError,
        RunConflictError,
        RunNotFoundError,
        RunRecordOwnerMismatchError,
        InvalidTranscriptPositionError,
    ),
)
async def begin_run_seed(
    run_id: SeedRunIdPath, body: BeginRunSeedRequest, request: Request
) -> Response:
    """Declare one attempt of the run's seed: freeze its operation (agent, session,
    command) and resolve its source (`next_turn`: the source's terminal record;
    `continuation`: its `source_end_id`). It creates no run and writes no record; the
    answer's `end_id` is the attempt's history end.

    The declaration's `run_id` must be the path's. Its canonical encoding (compact JSON,
    `{"declaration": {…}}`) may hold at most 1,000,000 bytes, however the body spells it
    (413 `payload_too_large`). The same declaration again is an exact retry (also after
    publication); another declaration of the attempt, another operation for the run ID, or
    a new attempt once one is published is `seed_conflict`; an attempt settled without
    publication is `preparation_abandoned`; a run ID already started is `run_conflict`.
    """
    store, calls = services(request)
    _same_run(run_id, body.declaration.run_id, "declaration.run_id")
    with naming(run_id):
        seed = await calls(store.begin_run_seed, body.declaration.contract())
    return _json(run_seed_json(seed))


@router.post(
    "/{run_id}/seed/attempts/{attempt_id}/records",
    dependencies=[WRITE],
    response_model=SeedAppendResultBody,
    operation_id="append-run-seed",
    summary="Append a seed record",
    responses=problems(*_ATTEMPT_PROBLEMS),
)
async def append_run_seed(
    run_id: SeedRunIdPath, attempt_id: AttemptIdPath, body: AppendRunSeedRequest, request: Request
) -> Response:
    """Append one record right after its exact predecessor (`previous_id`: the attempt's
    last record, "0" for the first): literal `messages` (a string holding the exact JSON
    text of a message array), a `literal_part` of a literal spanning several records, the
    source's `prefix`, or a `prepared` fragment of the compiled start (history first, the
    compiled start last). Byte values are standard base64 with padding.

    The same `key` with the same content is an exact retry (`inserted` false, its original
    ID); changed content, a stale `previous_id`, an append after publication or out of the
    order above is `seed_conflict`. The canonical command may hold at most 1,000,000 bytes.
    """
    store, calls = services(request)
    with naming(run_id):
        result = await calls(store.append_run_seed, run_id, attempt_id, body.record.contract())
    return _json(append_result_json(result))


@router.post(
    "/{run_id}/seed/attempts/{attempt_id}/publication",
    dependencies=[WRITE],
    response_model=RunPreparationBody,
    operation_id="publish-run-seed",
    summary="Publish a seed attempt",
    responses=problems(*_ATTEMPT_PROBLEMS),
)
async def publish_run_seed(
    run_id: SeedRunIdPath,
    attempt_id: AttemptIdPath,
    body: PublishRunSeedRequest,
    request: Request,
) -> Response:
    """Seal the attempt's whole chain at once: `seed_end_id` must be its history end,
    `end_id` its body end and `prepared_bytes` (more than 0) its prepared total, a source
    must be placed by its `prefix` and no literal left open, else `seed_conflict`. Once
    published the attempt is the run ID's only readable seed, which a start attaches with
    `seed_end_id`. Publishing again answers the same; another attempt of the run ID after
    one published is `seed_conflict`.
    """
    store, calls = services(request)
    with naming(run_id):
        preparation = await calls(
            store.publish_run_seed,
            run_id,
            attempt_id,
            body.seed_end_id,
            body.end_id,
            body.prepared_bytes,
        )
    return _json(preparation_json(preparation))


@router.post(
    "/{run_id}/seed/attempts/{attempt_id}/settlement",
    dependencies=[WRITE],
    response_model=PreparationAnswerBody,
    operation_id="settle-run-preparation",
    summary="Settle a preparation",
    responses=problems(SessionPurgedError, SessionNotFoundError, SeedConflictError),
)
async def settle_run_preparation(
    run_id: SeedRunIdPath,
    attempt_id: AttemptIdPath,
    body: SettleRunPreparationRequest,
    request: Request,
) -> Response:
    """Answer for good whether the operation was accepted: the published preparation
    (whatever attempt published it), or `found` false, and then the named attempt is
    abandoned for ever (an attempt never begun is recorded as abandoned): it can never
    publish, and its later begin, append or publish is `preparation_abandoned`. The
    operation's `run_id` must be the path's. Settling again gives the same answer."""
    store, calls = services(request)
    _same_run(run_id, body.operation.run_id, "operation.run_id")
    with naming(run_id):
        preparation = await calls(
            store.settle_run_preparation, body.operation.contract(), attempt_id
        )
    return _json(preparation_answer_json(preparation))


@router.get(
    "/{run_id}/preparation",
    dependencies=[READ],
    response_model=PreparationAnswerBody,
    operation_id="find-run-preparation",
    summary="Find a preparation",
    responses=problems(SessionPurgedError, SessionNotFoundError, SeedConflictError),
)
async def find_run_preparation(
    run_id: SeedRunIdPath,
    request: Request,
    *,
    agent_id: Annotated[
        str, Query(description="The operation's agent.", examples=[SEED_AGENT_EXAMPLE])
    ],
    session_id: Annotated[str, Query(description='The operation\'s session; "" if none.')] = "",
    command_id: Annotated[
        str, Query(description="The original command.", examples=[SEED_COMMAND_EXAMPLE])
    ],
) -> Response:
    """The operation's published preparation, or `found` false while none is published
    (ordinary absence: it does not mean the uploader stopped). Reads only; another
    operation for the run ID is `seed_conflict`."""
    store, calls = services(request)
    operation = PreparationOperation(
        agent_id=agent_id, run_id=run_id, session_id=session_id, command_id=command_id
    )
    with naming(run_id):
        preparation = await calls(store.find_run_preparation, operation)
    return _json(preparation_answer_json(preparation))


@router.get(
    "/{run_id}/seed",
    dependencies=[READ],
    response_model=RunSeedBody,
    operation_id="load-run-seed",
    summary="Load a published seed",
    responses=problems(*_READ_PROBLEMS),
)
async def load_run_seed(
    run_id: SeedRunIdPath,
    request: Request,
    seed_end_id: Annotated[
        str,
        Query(
            description="The published history end (a run's `seed_end_id`); required.",
            examples=[SEED_HISTORY_END_EXAMPLE],
        ),
    ],
) -> Response:
    """The run ID's published seed: its declaration, source and history end. No
    declaration is `seed_not_found`, none published `seed_not_published`, a `seed_end_id`
    that is not the published history end `seed_conflict`."""
    store, calls = services(request)
    with naming(run_id):
        seed = await calls(store.load_run_seed, run_id, seed_end_id)
    return _json(run_seed_json(seed))


@router.get(
    "/{run_id}/seed/records",
    dependencies=[READ],
    response_model=SeedPageBody,
    operation_id="list-run-seed-records",
    summary="List a published seed's history records",
    responses=problems(*_READ_PROBLEMS, InvalidTranscriptPositionError),
)
async def list_run_seed_records(
    run_id: SeedRunIdPath,
    request: Request,
    seed_end_id: Annotated[
        str,
        Query(
            description="The published history end; required (left out: `invalid_argument`, "
            "after the check of `limit`, which comes first).",
            examples=[SEED_HISTORY_END_EXAMPLE],
        ),
    ] = "",
    after: AfterQuery = "",
    limit: SeedLimitQuery = 100,
) -> Response:
    """The published history records (`"1"` through the history end, never a `prepared`
    one) after `after`, in position order, each with its exact bytes. A published chain
    never changes: the same arguments give the same page."""
    store, calls = services(request)
    with naming(run_id):
        page_limit = _limit(limit)
        page = await calls(store.list_run_seed_records, run_id, seed_end_id, after, page_limit)
    return _json(seed_page_json(page))


@router.get(
    "/{run_id}/preparation/records",
    dependencies=[READ],
    response_model=SeedPageBody,
    operation_id="list-run-preparation-records",
    summary="List a published compiled start's records",
    responses=problems(*_READ_PROBLEMS, InvalidTranscriptPositionError),
)
async def list_run_preparation_records(
    run_id: SeedRunIdPath,
    request: Request,
    end_id: Annotated[
        str,
        Query(
            description="The published body end; required (left out: `invalid_argument`, "
            "after the check of `limit`, which comes first).",
            examples=[SEED_END_EXAMPLE],
        ),
    ] = "",
    after: AfterQuery = "",
    limit: SeedLimitQuery = 100,
) -> Response:
    """The published `prepared` records (after the history end through the body end):
    the compiled start a recovering worker executes, never transcript history. `end_id`
    must be exactly the body end, else `seed_conflict`."""
    store, calls = services(request)
    with naming(run_id):
        page_limit = _limit(limit)
        page = await calls(store.list_run_preparation_records, run_id, end_id, after, page_limit)
    return _json(seed_page_json(page))
