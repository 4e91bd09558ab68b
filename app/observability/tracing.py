"""OpenTelemetry traces, only when asked for (the ``otel`` extra and the ``OTEL_*`` variables).

Tracing is on when the packages of ``runtime-store[otel]`` import and the environment names
an exporter: ``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``; ``none`` turns it off) or an
OTLP endpoint (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``);
``OTEL_SDK_DISABLED=true`` wins. The SDK reads the rest itself: ``OTEL_SERVICE_NAME``
(default ``runtime-store``), ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER``, the
exporter's endpoint, headers and timeout.

A request then has a server span (FastAPI's instrumentation), inside it a span per store
operation (``store.append_run_record``) around its transaction and retries, and inside
that a span per SQL statement (SQLAlchemy's instrumentation; statements without their
bound values). Off, none of this is imported and nothing is wrapped.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any, Final

from sqlalchemy.engine import Engine

from runtime_store_client import StoreError

log = logging.getLogger("runtime_store.tracing")

#: Requests that get no span unless ``OTEL_PYTHON_FASTAPI_EXCLUDED_URLS`` says otherwise:
#: probes and scrapes, every few seconds.
EXCLUDED_URLS: Final = r"/healthz$,/readyz$,/metrics$"
SERVICE_NAME: Final = "runtime-store"


def tracing_requested(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the ``OTEL_*`` variables ask for traces."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters:
        return exporters != "none"
    return bool(
        environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def _exporters(environ: Mapping[str, str]) -> list[Any]:
    """The span exporters ``OTEL_TRACES_EXPORTER`` names (default ``otlp``)."""
    found: list[Any] = []
    names = (environ.get("OTEL_TRACES_EXPORTER") or "otlp").lower().split(",")
    for name in (name.strip() for name in names):
        if name == "otlp":
            protocol = environ.get(
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            )
            if protocol == "grpc":  # not in the otel extra: opentelemetry-exporter-otlp-proto-grpc
                grpc = importlib.import_module(
                    "opentelemetry.exporter.otlp.proto.grpc.trace_exporter"
                )
                found.append(grpc.OTLPSpanExporter())
            else:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

                found.append(OTLPSpanExporter())
        elif name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            found.append(ConsoleSpanExporter())
        elif name and name != "none":
            log.warning("OTEL_TRACES_EXPORTER names %r, which runtime-store does not know", name)
    return found


class Tracing:
    """The tracing of one app: its tracer provider and what it instruments."""

    def __init__(self, provider: Any, *, owned: bool) -> None:
        from opentelemetry import trace

        self.provider = provider
        self.owned = owned
        self.tracer = provider.get_tracer("runtime_store")
        self._trace = trace

    @staticmethod
    def from_environment(version: str, environ: Mapping[str, str] = os.environ) -> Tracing | None:
        """A provider built as the ``OTEL_*`` variables say; ``None`` (and a warning) when
        the ``otel`` extra is not installed."""
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            attributes = {"service.version": version}
            if not environ.get("OTEL_SERVICE_NAME"):
                attributes["service.name"] = SERVICE_NAME
            provider = TracerProvider(resource=Resource.create(attributes))
            for exporter in _exporters(environ):
                provider.add_span_processor(BatchSpanProcessor(exporter))
        except ImportError as exc:
            log.warning(
                "OTEL_* variables ask for traces but %s is not installed: install "
                "runtime-store[otel]; serving without traces",
                exc.name,
            )
            return None
        return Tracing(provider, owned=True)

    def instrument_app(self, app: Any) -> None:
        """A server span per request (probes and scrapes excluded by default)."""
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

        excluded = None if os.environ.get("OTEL_PYTHON_FASTAPI_EXCLUDED_URLS") else EXCLUDED_URLS
        FastAPIInstrumentor.instrument_app(
            app,
            tracer_provider=self.provider,
            excluded_urls=excluded,
            # No span per ASGI message: an event stream would make one per event.
            exclude_spans=["receive", "send"],
        )

    def instrument_engine(self, engine: Engine) -> None:
        """A span per SQL statement of ``engine`` (never its bound values)."""
        from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
        from opentelemetry.metrics import NoOpMeterProvider

        # EngineTracer, not SQLAlchemyInstrumentor: the instrumentor patches every engine of
        # the process once, this traces exactly this engine with this provider.
        usage = NoOpMeterProvider().get_meter("runtime_store").create_up_down_counter("unused")
        EngineTracer(self.tracer, engine, usage)  # type: ignore[no-untyped-call]

    def trace_store(self, store: Any) -> None:
        """A span around each public method of ``store``: the operation, its transaction
        and its retries, on the database thread that runs it."""
        for name in dir(type(store)):
            method = getattr(store, name)
            if not name.startswith("_") and callable(method):
                setattr(store, name, self._traced(name, method))

    def _traced(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        tracer = self.tracer

        @functools.wraps(method)
        def traced(*args: Any, **kwargs: Any) -> Any:
            with tracer.start_as_current_span(
                f"store.{name}", attributes={"runtime_store.operation": name}
            ) as span:
                try:
                    return method(*args, **kwargs)
                except StoreError as exc:
                    span.set_attribute("runtime_store.code", exc.code)
                    raise

        return traced

    def trace_id(self) -> str:
        """The current trace's ID as 32 hex digits ("" outside any span)."""
        context = self._trace.get_current_span().get_span_context()
        return format(context.trace_id, "032x") if context.is_valid else ""

    def shutdown(self) -> None:
        """Send what is buffered (a provider this module built; a given one is its owner's)."""
        if self.owned:
            self.provider.shutdown()
