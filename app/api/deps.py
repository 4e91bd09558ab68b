"""Dependencies shared by the routers."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Query, Request
from pydantic import AfterValidator, BeforeValidator
from pydantic_core import PydanticCustomError

from app.domain.query_numbers import is_json_number
from app.storage import SqlStore

from .middleware.exact_path import exact_segment
from .store_calls import StoreCalls


async def get_store(request: Request) -> SqlStore:
    # async: FastAPI would otherwise run this attribute read in a worker thread.
    store: SqlStore = request.app.state.store
    return store


async def get_blocking_store(request: Request) -> SqlStore:
    store: SqlStore = request.app.state.blocking_store
    return store


async def get_calls(request: Request) -> StoreCalls:
    calls: StoreCalls = request.app.state.calls
    return calls


def services(request: Request) -> tuple[SqlStore, StoreCalls]:
    """The store and its calls, for a route that takes the ``request``.

    The per-request routes (appends, starts, reads, pages, memory) use this instead of
    ``StoreDep``/``StoreCallsDep``: FastAPI resolves a dependency at a few microseconds of
    bookkeeping each, and ``request`` costs no resolution (docs/performance.md, "The HTTP
    path").
    """
    state = request.app.state
    return state.store, state.calls


StoreDep = Annotated[SqlStore, Depends(get_store)]
#: The store over blocking connections, for ``StoreCalls.heavy`` (on a database thread).
BlockingStoreDep = Annotated[SqlStore, Depends(get_blocking_store)]
#: Awaits a store call: ``await calls(store.load_run, id)`` (store_calls.py).
StoreCallsDep = Annotated[StoreCalls, Depends(get_calls)]
#: An ID in a path segment, exactly (CONTRACT.md 2.9): every path parameter of the API is
#: one (``app/api/middleware/exact_path.py``; tests/security/test_reachable_ids.py checks
#: every route).
ExactSegment = AfterValidator(exact_segment)
SessionIdPath = Annotated[
    str, Path(description="The session ID.", examples=["chat-session-123"]), ExactSegment
]
RunIdPath = Annotated[str, Path(description="The run ID.", examples=["run-42"]), ExactSegment]
AgentIdPath = Annotated[str, Path(description="The agent ID.", examples=["planner"]), ExactSegment]
CursorQuery = Annotated[
    str,
    Query(
        description='Opaque cursor from the previous page\'s next_cursor; "" reads from the start.'
    ),
]


def _json_syntax(kind: str, noun: str) -> BeforeValidator:
    """A query parameter's text must be a JSON number before its type parses it; refused
    with the type's own error (``int_parsing``, ``float_parsing``), as ``ten`` is."""

    def check(value: object) -> object:
        if isinstance(value, str) and not is_json_number(value):
            raise PydanticCustomError(
                f"{kind}_parsing", f"Input should be {noun} in JSON number syntax"
            )
        return value

    return BeforeValidator(check)


#: An integer or a number in a query string: JSON syntax only (not Python's ``1_0``,
#: ``+1``, ``01`` or ``inf``; ``app/domain/query_numbers.py``).
JsonInteger = _json_syntax("int", "a valid integer")
JsonFloat = _json_syntax("float", "a valid number")

LimitQuery = Annotated[
    int,
    Query(
        ge=1,
        description="Page size; above the service maximum (default 1000) it is served "
        "as the maximum.",
    ),
    JsonInteger,
]
