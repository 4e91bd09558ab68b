"""``create_app(settings)``: the FastAPI application over one ``SqlStore``.

Nothing happens at import time: the lifespan creates the engine and disposes of it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi_offline import FastAPIOffline

from .api.auth import decide_auth
from .api.body_limit import BodySizeLimit
from .api.docs import DocsSecurityHeaders
from .api.offload import Offload
from .api.problems import UnexpectedErrors, install_problem_handlers, problem_media_types
from .api.request_id import RequestIdMiddleware
from .api.routes import health, memory, runs, sessions, transcripts
from .api.routes.transcripts import TranscriptBounds
from .settings import Settings
from .storage import SqlStore, create_engine
from .storage.tokens import Tokens

DESCRIPTION = """\
The durable owner of runtime state for AI-agent runtimes: **sessions**, **run lifecycle
transactions** (each state change stored with the records that prove it, in one
transaction) and an append-only, ordered **run record log** per run and per session.

* Exact retries are answered with the original record IDs (`inserted = false`); changed
  retries are refused with a `409` problem.
* Every error is an `application/problem+json` body with a stable `code`; only `503
  unavailable` is worth retrying, and every write is safe to retry.
* Times are RFC 3339 UTC with millisecond precision; a record `payload` is a string holding
  the exact JSON text; checkpoint `data` is standard base64.
"""

TAGS = [
    {"name": "sessions", "description": "Host-owned session administration."},
    {"name": "runs", "description": "Run lifecycle transactions and run reads."},
    {"name": "records", "description": "The append-only run record log, per run and per session."},
    {"name": "memory", "description": "Product-owned per-run memory events."},
    {
        "name": "operations",
        "description": "Kept out of this document: `GET /healthz` (the process is alive), "
        "`GET /readyz` (the database answers and its schema is at head, else 503), `/docs` "
        "and `/redoc` (served offline), `/openapi.json`.",
    },
]


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the application; the engine lives as long as the app's lifespan."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # One connection per database thread (and a few for readiness checks): a store call
        # never waits for a connection, and no connection is opened and closed per call.
        engine = create_engine(
            settings.database_url, pool_size=settings.db_pool_size, max_overflow=4
        )
        app.state.engine = engine
        app.state.offload = Offload(settings.db_pool_size)
        app.state.transcript_bounds = TranscriptBounds(
            records=settings.max_transcript_records, payload_bytes=settings.max_transcript_bytes
        )
        app.state.store = SqlStore(
            engine,
            page_max=settings.page_max,
            page_byte_budget=settings.page_byte_budget,
            limits=settings.limits(),
        )
        key = settings.token_key.get_secret_value() if settings.token_key else None
        app.state.auth = decide_auth(Tokens(engine, key))
        try:
            yield
        finally:
            app.state.offload.close()
            engine.dispose()

    app = FastAPIOffline(
        title="runtime-store",
        version=version("runtime-store"),
        description=DESCRIPTION,
        openapi_tags=TAGS,
        lifespan=lifespan,
        static_url="/docs-assets",
    )
    for router in (
        sessions.router,
        runs.router,
        transcripts.router,
        memory.router,
        health.router,
    ):
        app.include_router(router)
    install_problem_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(UnexpectedErrors)
    app.add_middleware(DocsSecurityHeaders)
    app.add_middleware(RequestIdMiddleware)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = problem_media_types(
                get_openapi(
                    title=app.title,
                    version=app.version,
                    description=app.description,
                    routes=app.routes,
                    tags=app.openapi_tags,
                )
            )
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def create_app_from_environment() -> FastAPI:
    """Factory for ``uvicorn --factory`` and ``runtime-store serve``."""
    return create_app(Settings())
