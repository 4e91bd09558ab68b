"""``create_app(settings)``: the FastAPI application over one ``SqlStore``.

Nothing happens at import time: the lifespan creates the engine and disposes of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi_offline import FastAPIOffline

from .api.auth import Authenticate, AuthMode
from .api.examples import add_request_examples
from .api.live_tail import SharedReads, TailSettings
from .api.middleware.body_depth import BodyDepthLimit
from .api.middleware.body_limit import IMPORT_ROUTE, BodySizeLimit
from .api.middleware.exact_path import ExactPath
from .api.middleware.front import Front
from .api.middleware.host_check import HostCheck, allowed_names
from .api.middleware.offline_docs import OfflineRedocBundle
from .api.middleware.positions import ReadYourWrites
from .api.problem_docs import problem_media_types
from .api.problems import install_problem_handlers
from .api.routes import (
    counts,
    health,
    memory,
    record_reads,
    runs,
    seeds,
    sessions,
    starts,
    tail,
    transcripts,
    transfer,
    wait,
    webhooks,
    whoami,
)
from .api.routes.metrics import router as metrics_router
from .api.routes.transcripts import TranscriptBounds
from .api.store_calls import CancelOnDisconnect, StoreCalls
from .console import root_router as console_root_router
from .console import router as console_router
from .observability.setup import Observability
from .retention_sweeper import RetentionSweeper
from .serving import freeze_startup_heap
from .settings import Settings
from .storage import (
    REPLICA_CONNECT_TIMEOUT_SECONDS,
    Engine,
    ImportSweeper,
    Notifications,
    SqlStore,
    Tokens,
    WebhookConfig,
    create_async_engine,
    create_engine,
    database_backend,
)
from .webhook_delivery.dispatcher import WebhookDispatcher

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
    {
        "name": "seeds",
        "description": "Run seeds and preparations: a run's initial history and compiled start "
        "request, uploaded and published before its start, and settled when an answer is lost.",
    },
    {"name": "memory", "description": "Product-owned per-run memory events."},
    {
        "name": "webhooks",
        "description": "Subscriptions to run and session events, delivered by signed POSTs.",
    },
    {"name": "tokens", "description": "Who the caller's bearer token is and what it may do."},
    {
        "name": "operations",
        "description": "Kept out of this document: `GET /healthz` (the process is alive), "
        "`GET /readyz` (the database answers and its schema is at head, else 503), `/docs` "
        "and `/redoc` (served offline), `/openapi.json`, `GET /metrics` (Prometheus text "
        "format, for `reader` tokens; docs/operations.md).",
    },
]


#: The endpoints of the calls a runtime makes most, matched before every other route: a
#: run's appends and its pages (each route tried costs a path match).
FIRST_MATCHED = (runs.append_run_record, runs.list_run_records)

#: Connections each worker's pool may open beyond ``db_pool_size``.
DB_POOL_OVERFLOW = 4


def blocking_pool_size(slots: int) -> int:
    """PostgreSQL: the blocking connections a worker needs besides its asynchronous ones,
    for its heavy calls (``StoreCalls.heavy_slots``), webhook delivery and retention."""
    return max(1, slots // 4) + 2


def _start_background(
    settings: Settings, store: SqlStore, imports: ImportSweeper | None
) -> list[RetentionSweeper | WebhookDispatcher | ImportSweeper]:
    """The worker's background threads: retention sweeps (CONTRACT.md 11.4), one replica
    at a time, when configured; webhook delivery (13.3), one dispatcher per worker; on
    SQLite, the sweep of imports that died while publishing (2.10)."""
    started: list[RetentionSweeper | WebhookDispatcher | ImportSweeper] = []
    if imports is not None:
        imports.start()
        started.append(imports)
    if settings.webhook_dispatch:
        dispatcher = WebhookDispatcher(
            store,
            retry_hours=settings.webhook_retry_hours,
            keep_settled_seconds=settings.webhook_delivery_retention.total_seconds(),
        )
        dispatcher.start()
        started.append(dispatcher)
    policy = settings.retention_policy()
    if settings.retention_interval is not None and not policy.keeps_everything:
        sweeper = RetentionSweeper(
            run_sweep=lambda stop: store.retention_sweep(policy, should_stop=stop),
            exclusive=store.retention_exclusive,
            interval=settings.retention_interval,
        )
        sweeper.start()
        started.append(sweeper)
    return started


def _install_middleware(app: FastAPI, settings: Settings, observability: Observability) -> None:
    """The problem handlers and the middleware stack, innermost first."""
    install_problem_handlers(app)
    # Innermost of the body bounds: scans a body BodySizeLimit has already bounded.
    app.add_middleware(BodyDepthLimit, unscanned=[IMPORT_ROUTE])
    app.add_middleware(CancelOnDisconnect)  # innermost: store calls end with their client
    app.add_middleware(
        BodySizeLimit,
        max_bytes=settings.max_body_bytes,
        streamed={IMPORT_ROUTE: settings.max_import_bytes},
    )
    app.add_middleware(ExactPath)  # routes on the raw path: %2F stays in its segment
    if settings.read_database_urls:  # positions of writes, routing of reads (14)
        app.add_middleware(ReadYourWrites)
    app.add_middleware(OfflineRedocBundle)
    if settings.token_key is None:  # open: loopback Hosts only (DNS rebinding)
        app.add_middleware(HostCheck, allowed=allowed_names(settings.allowed_hosts))
    # Who the caller is, before any body is read (app/api/auth).
    app.add_middleware(Authenticate)
    # Outermost: request IDs, metrics and the access line, unexpected errors as problems,
    # the response headers; one layer, one ``send`` wrapper.
    app.add_middleware(Front, observer=observability.observer())
    observability.install(app)  # the build-info metric; server spans


@asynccontextmanager
async def _services(
    app: FastAPI, settings: Settings, observability: Observability
) -> AsyncIterator[None]:
    """The worker's engines, stores and background work, on ``app.state``.

    One store answers every request: on PostgreSQL over psycopg's asynchronous
    connections, its calls awaited on the event loop (``app/api/store_calls.py``); on
    SQLite on the database threads. On PostgreSQL a second store of the same code, over
    blocking connections, serves what runs on threads: exports, imports, the webhook
    dispatcher, retention sweeps.
    """
    # One connection per call slot (and a few for readiness checks): a store call never
    # waits for a connection, and no connection is opened and closed per call.
    greenlets = database_backend(settings.database_url) == "postgresql"
    engine = create_engine(
        settings.database_url,
        # PostgreSQL: only heavy calls (a quarter of the slots) and two background jobs.
        pool_size=blocking_pool_size(settings.db_pool_size) if greenlets else settings.db_pool_size,
        max_overflow=DB_POOL_OVERFLOW,
        read_timeout_seconds=settings.read_timeout_seconds,
        sqlite_synchronous=settings.sqlite_synchronous,
    )
    service_engine = (
        create_async_engine(
            settings.database_url,
            pool_size=settings.db_pool_size,
            max_overflow=DB_POOL_OVERFLOW,
            read_timeout_seconds=settings.read_timeout_seconds,
        )
        if greenlets
        else None
    )
    calls_engine = engine if service_engine is None else service_engine.sync_engine
    app.state.engine = engine
    # Read replicas (CONTRACT.md 14): pools as large as the primary's, a short connect
    # timeout so a replica that is down costs one read that long, then is left out.
    read_engines = [
        create_async_engine(
            url,
            pool_size=settings.db_pool_size,
            max_overflow=DB_POOL_OVERFLOW,
            read_timeout_seconds=settings.read_timeout_seconds,
            connect_args={"connect_timeout": REPLICA_CONNECT_TIMEOUT_SECONDS},
        )
        for url in (settings.read_database_urls if greenlets else [])
    ]
    app.state.calls = StoreCalls(settings.db_pool_size, greenlets=greenlets)
    app.state.transcript_bounds = TranscriptBounds(
        records=settings.max_transcript_records, payload_bytes=settings.max_transcript_bytes
    )

    def store_over(engine: Engine, replicas: list[Engine], *, counted: bool = False) -> SqlStore:
        return SqlStore(
            engine,
            page_max=settings.page_max,
            page_byte_budget=settings.page_byte_budget,
            limits=settings.limits(),
            fast_path=settings.pg_fast_path,
            group_commit=settings.group_commit,
            require_seeds=settings.require_seeds,
            webhooks=WebhookConfig(allowed_hosts=tuple(settings.webhook_allowed_hosts)),
            read_engines=replicas,
            replica_max_lag_seconds=settings.replica_max_lag_seconds,
            counts_primary_reads=counted,
        )

    store = app.state.store = store_over(calls_engine, [e.sync_engine for e in read_engines])
    blocking = app.state.blocking_store = (
        store if service_engine is None else store_over(engine, [], counted=bool(read_engines))
    )
    stop_watching = observability.watch(
        calls_engine, store, pool_size=settings.db_pool_size, max_overflow=DB_POOL_OVERFLOW
    )
    # Tokens are required exactly when a key is configured: every worker decides alike.
    key = settings.token_key.get_secret_value() if settings.token_key else None
    app.state.auth = auth = AuthMode(
        Tokens(calls_engine, key), app.state.calls, required=key is not None
    )
    if auth.required:
        auth.identities.start()
    app.state.tail_settings = TailSettings(
        heartbeat_seconds=settings.tail_heartbeat_seconds, page_size=settings.page_max
    )
    app.state.notifications = notifications = Notifications(
        engine,
        max_streams=settings.max_streams,
        safety_seconds=settings.tail_safety_seconds,
        poll_seconds=settings.tail_poll_seconds,
    )
    app.state.tail_reads = SharedReads(notifications, app.state.calls)
    if not store.commits_notified_by_database:
        store.watch_commits(notifications.committed)
    await notifications.start()
    background = _start_background(settings, blocking, ImportSweeper.when_needed(engine))
    try:
        yield
    finally:
        for task in background:
            await asyncio.to_thread(task.stop)
        await notifications.stop()
        await auth.identities.stop()
        app.state.calls.close()
        stop_watching()
        if service_engine is not None:
            await service_engine.dispose()
        for read_engine in read_engines:
            await read_engine.dispose()
        engine.dispose()


def create_app(
    settings: Settings | None = None,
    *,
    tracer_provider: Any = None,
    freeze_heap: bool = False,
) -> FastAPI:
    """Build the application; the engine lives as long as the app's lifespan.

    Traces are on when the ``OTEL_*`` variables ask for them (app/observability/tracing.py)
    or a ``tracer_provider`` is given (tests give one with an in-memory exporter). With
    ``freeze_heap`` (a served worker: one app per process) the heap as the lifespan has
    started it leaves the collector's full passes (``freeze_startup_heap``).
    """
    settings = settings or Settings()
    observability = Observability.of(
        settings, version("runtime-store"), tracer_provider=tracer_provider
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with _services(app, settings, observability):
            if freeze_heap:
                freeze_startup_heap()
            yield

    # The API's path operations are the app's own routes, one flat list matched once per
    # request. ``include_router`` would keep each router whole behind a node FastAPI walks
    # route by route (and again inside the router it picked): about 45 µs of CPU per request
    # (docs/performance.md, "One path"). The routes are the routers' own objects (their
    # prefixes, dependencies and responses), so 405s and the OpenAPI document (built in the
    # routers' order, below) are unchanged. (``app.dependency_overrides`` does not reach
    # them: nothing overrides a dependency.) The calls a runtime makes most are matched
    # first (``FIRST_MATCHED``); no other route matches their paths, so each request goes
    # to the route it went to before (tests/api/test_route_order.py).
    api_routers = (
        sessions.router,
        transfer.router,
        starts.router,
        runs.router,
        counts.router,  # console lists (issue 33)
        record_reads.router,
        transcripts.router,
        seeds.router,
        memory.router,
        tail.router,
        wait.router,
        webhooks.router,
        whoami.router,
        health.router,
    )
    documented: list[Any] = [route for router in api_routers for route in router.routes]
    app = FastAPIOffline(
        title="runtime-store",
        version=version("runtime-store"),
        description=DESCRIPTION,
        openapi_tags=TAGS,
        lifespan=lifespan,
        static_url="/docs-assets",
        # Traces come from OpenTelemetry's FastAPI instrumentation when asked for
        # (observability/tracing.py), metrics from prometheus-client: FastAPI's own
        # telemetry would only repeat them, and asks the global providers on every request.
        telemetry={"tracing": False, "metrics": False, "logs": False},
        routes=sorted(documented, key=lambda route: route.endpoint not in FIRST_MATCHED),
    )
    # Pages for people, off the API's hot path: included whole.
    for router in (
        console_router,  # /console: HTML over the routes above, kept out of the document
        console_root_router,  # /favicon.ico
    ):
        app.include_router(router)
    if settings.metrics:
        app.include_router(metrics_router)
    app.state.metrics_open_to_loopback = settings.metrics_open_to_loopback
    _install_middleware(app, settings, observability)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                # The API's routes in their routers' order, then the app's own.
                routes=[*documented, *app.routes[len(documented) :]],
                tags=app.openapi_tags,
            )
            app.openapi_schema = add_request_examples(problem_media_types(document))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def create_app_from_environment() -> FastAPI:
    """Factory for ``uvicorn --factory`` and ``runtime-store serve``: one app per worker
    process, whose start-up heap is frozen."""
    return create_app(Settings(), freeze_heap=True)
