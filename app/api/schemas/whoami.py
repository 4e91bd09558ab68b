"""The body of ``GET /v1/whoami``: who the caller is and what it may do."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.api.schemas.wire_model import WireModel


class WhoamiBody(WireModel):
    """The caller's token and what it may do, or the open mode."""

    mode: Literal["tokens", "open"] = Field(
        description="`tokens` when the service requires a bearer token, `open` when it "
        "runs without authentication."
    )
    name: str = Field(description="The token's name; empty in open mode.", examples=["ops-alice"])
    # Literals, not the domain enums: a schema named ``Role`` already exists (a message's).
    role: Literal["admin", "worker", "reader"] = Field(
        description="The token's role; `admin` in open mode (anyone may do anything)."
    )
    permissions: list[Literal["read", "write", "admin"]] = Field(
        description="What the role may do: `read`, `write`, `admin`."
    )
