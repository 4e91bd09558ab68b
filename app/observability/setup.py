"""What ``create_app`` switches on: request metrics, the access line, pool gauges, traces."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine

from app.settings import Settings

from .metrics import set_build_info
from .pool import watch_pool
from .requests import RequestObserver
from .tracing import Tracing, tracing_requested


@dataclass(frozen=True)
class Observability:
    """The observability of one app, as its settings and the ``OTEL_*`` variables say."""

    metrics: bool
    access_log: bool
    tracing: Tracing | None

    @staticmethod
    def of(settings: Settings, version: str, *, tracer_provider: Any = None) -> Observability:
        """Traces when a ``tracer_provider`` is given (tests: an in-memory exporter) or the
        ``OTEL_*`` variables ask for them."""
        tracing: Tracing | None = None
        if tracer_provider is not None:
            tracing = Tracing(tracer_provider, owned=False)
        elif tracing_requested():
            tracing = Tracing.from_environment(version)
        return Observability(settings.metrics, settings.access_log, tracing)

    def observer(self) -> RequestObserver | None:
        """What counts, times and logs each request (``None``: neither metrics nor the
        access line); the service's outermost layer calls it (app/api/middleware/front.py)."""
        if not (self.metrics or self.access_log):
            return None
        return RequestObserver(
            metrics=self.metrics,
            access_log=self.access_log,
            trace_id=None if self.tracing is None else self.tracing.trace_id,
        )

    def install(self, app: Any) -> None:
        """The build-info metric and the server spans (FastAPI's instrumentation wraps the
        whole stack, whatever the order)."""
        if self.metrics:
            set_build_info(app.version)
        if self.tracing is not None:
            self.tracing.instrument_app(app)

    def watch(
        self, engine: Engine, store: Any, *, pool_size: int, max_overflow: int
    ) -> Callable[[], None]:
        """Pool gauges and statement and store spans for a new engine and its store;
        returns what stops them (call it before disposing of the engine)."""
        pool = (
            watch_pool(engine, size=pool_size, max_overflow=max_overflow) if self.metrics else None
        )
        if self.tracing is not None:
            self.tracing.instrument_engine(engine)
            self.tracing.trace_store(store)

        def stop() -> None:
            if pool is not None:
                pool.close()
            if self.tracing is not None:
                self.tracing.shutdown()

        return stop
