"""OpenTelemetry traces: a server span per request, a store span around its transaction,
statement spans inside it; none of it unless asked for."""

from __future__ import annotations

import uuid

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.testclient import TestClient

from app.main import create_app
from app.observability.logs import JsonFormatter
from app.observability.tracing import tracing_requested
from app.settings import Settings
from tests.api.wire_builders import append_body, create_session, note, ok, start_root
from tests.contract.builders import run_start
from tests.observability import captured_lines


def _by_id(spans: tuple[ReadableSpan, ...]) -> dict[int, ReadableSpan]:
    return {span.context.span_id: span for span in spans if span.context is not None}


def test_an_append_is_a_server_span_around_a_store_span_around_its_statements(
    sqlite_url: str,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = create_app(Settings(database_url=sqlite_url), tracer_provider=provider)
    marker = f"PAYLOAD-{uuid.uuid4().hex}"
    with captured_lines(JsonFormatter()) as lines, TestClient(app) as http:
        run = start_root(http, create_session(http))
        exporter.clear()
        record = note(run, "traced", payload=f'{{"m":"{marker}"}}'.encode())
        ok(http.post(f"/v1/runs/{run.run_id}/records", json=append_body(record)))
    spans = exporter.get_finished_spans()
    by_id = _by_id(spans)

    store = [span for span in spans if span.name == "store.append_run_record"]
    assert len(store) == 1, [span.name for span in spans]
    server = by_id[store[0].parent.span_id]  # type: ignore[union-attr]
    assert server.name == "POST /v1/runs/{run_id}/records"
    assert server.parent is None
    statements = [
        span for span in spans if span.parent and span.parent.span_id == store[0].context.span_id
    ]
    assert statements, "no statement span inside the store span"
    assert all(span.attributes and span.attributes.get("db.system") for span in statements)
    # Bound values are never recorded: the payload is in no span.
    assert marker not in str([dict(span.attributes or {}) for span in spans])
    # The access line names the trace.
    access = [line for line in lines if '"runtime_store.access"' in line][-1]
    assert format(server.context.trace_id, "032x") in access


def test_a_refused_write_marks_its_store_span_with_the_problem_code(sqlite_url: str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ghost = run_start(run_id=f"ghost-{uuid.uuid4().hex[:8]}")
    app = create_app(Settings(database_url=sqlite_url), tracer_provider=provider)
    with TestClient(app, raise_server_exceptions=False) as http:
        path = f"/v1/runs/{ghost.run_id}/records"
        response = http.post(path, json=append_body(note(ghost, "x")))
    assert response.status_code == 404, response.text
    store = [
        span for span in exporter.get_finished_spans() if span.name == "store.append_run_record"
    ]
    assert store[-1].attributes is not None
    assert store[-1].attributes["runtime_store.code"] == "run_not_found"


@pytest.mark.parametrize(
    ("environ", "requested"),
    [
        ({}, False),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_SERVICE_NAME": "store"}, False),
    ],
)
def test_traces_are_on_only_when_the_otel_variables_ask(
    environ: dict[str, str], requested: bool
) -> None:
    assert tracing_requested(environ) is requested


def test_an_app_without_otel_variables_is_not_instrumented(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    app = create_app(Settings(database_url=sqlite_url))
    assert not getattr(app, "_is_instrumented_by_opentelemetry", False)
