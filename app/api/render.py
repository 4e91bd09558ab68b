"""Rendering of response bodies.

The routes build their response models from the store's results, which the store has
already validated; rendering them straight to JSON skips FastAPI's second validation of
the response (a dump to a dict, a validation, a serialisation). Routes still declare
``response_model`` so the OpenAPI document describes each body.
"""

from __future__ import annotations

from fastapi import Response
from pydantic import BaseModel


def respond(body: BaseModel) -> Response:
    """``body`` as ``application/json``, serialised once by pydantic-core."""
    return Response(content=body.model_dump_json(), media_type="application/json")
