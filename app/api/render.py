"""Rendering of response bodies.

The routes build their response models from the store's results, which the store has
already validated; rendering them straight to JSON skips FastAPI's second validation of
the response (a dump to a dict, a validation, a serialisation). Routes still declare
``response_model`` so the OpenAPI document describes each body.
"""

from __future__ import annotations

import json

from fastapi import Response
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

from app.observability.context import note_record
from runtime_store_client import AppendResult, Page

from .wire import format_time


def respond(body: BaseModel) -> Response:
    """``body`` as ``application/json``, serialised once by pydantic-core.

    pydantic-core refuses to serialise a value nested deeper than its own limit (about 250
    levels). Nothing this service accepts now nests past 128 (CONTRACT.md 2.8), but memory
    ``data`` stored before that bound may: such a body is written by the standard library's
    encoder instead, so every accepted value can still be read back.
    """
    try:
        content = body.model_dump_json()
    except PydanticSerializationError:
        content = json.dumps(
            body.model_dump(mode="python"), ensure_ascii=False, separators=(",", ":")
        )
    return Response(content=content, media_type="application/json")


def record_page_json(page: Page) -> bytes:
    """``RecordPageBody.of(page).model_dump_json()`` without a model per record: a page
    holds up to 1,000 records, and building and dumping their models cost about 9 µs a
    record (docs/performance.md, "Cheap pages"). The same keys in the same order, the same
    two conversions, serialised by pydantic-core; ``tests/api/test_render.py`` checks the
    bytes against the models'. A payload goes to pydantic-core as its bytes, which it
    writes as their UTF-8 text (its default for ``bytes``): the string ``format_payload``
    gives, decoded in Rust rather than in Python, once per record."""
    return to_json(
        {
            "records": [
                {
                    "id": record.id,
                    "event_key": record.event_key,
                    "run_id": record.run_id,
                    "agent_id": record.agent_id,
                    "session_id": record.session_id,
                    "turn_id": record.turn_id,
                    "type": record.type,
                    "payload": record.payload,
                    "timestamp": format_time(record.timestamp),
                }
                for record in page.records
            ],
            "next_cursor": page.next_cursor,
        }
    )


def respond_record_page(page: Page) -> Response:
    """A page of records as ``application/json`` (``record_page_json``)."""
    return Response(content=record_page_json(page), media_type="application/json")


def _append_result(result: AppendResult) -> dict[str, object]:
    note_record(result.inserted)  # as ``AppendResultBody.of``: the record metrics
    return {
        "id": result.id,
        "inserted": result.inserted,
        "session_status": result.session_status,
    }


def respond_append_result(result: AppendResult) -> Response:
    """``respond(AppendResultBody.of(result))`` without the model (an append's answer:
    the most frequent body); ``tests/api/test_render.py`` checks the bytes."""
    return Response(content=to_json(_append_result(result)), media_type="application/json")


def respond_append_results(results: list[AppendResult]) -> Response:
    """``respond(AppendResultsBody.of(results))`` without a model per result (a batch
    holds up to 1,000); ``tests/api/test_render.py`` checks the bytes."""
    body = {"results": [_append_result(result) for result in results]}
    return Response(content=to_json(body), media_type="application/json")
