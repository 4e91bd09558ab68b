"""``GET /v1/whoami``: the caller's token name and role, or the open mode."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from app.api.auth import READ, AuthMode, identity_of
from app.api.problem_docs import problems
from app.api.render import respond
from app.api.schemas.whoami import WhoamiBody
from app.domain.tokens import PERMISSIONS, Permission, Role

router = APIRouter()


@router.get(
    "/v1/whoami",
    tags=["tokens"],
    dependencies=[READ],  # every role may read: any valid token may ask who it is
    response_model=WhoamiBody,
    operation_id="whoami",
    summary="Who the caller's token is",
    responses=problems(),
)
async def whoami(request: Request) -> Response:
    """The caller's token name, role and permissions. With tokens required (a token key is
    configured), a missing, unknown or revoked token is refused with `unauthenticated`
    (401) like any other call; every role may ask. In open mode the answer is
    `{"mode": "open", "name": "", "role": "admin"}`: anyone may do anything."""
    auth: AuthMode = request.app.state.auth
    if not auth.required:
        role, name, mode = Role.ADMIN, "", "open"
    else:  # the READ check found the token's identity
        identity = identity_of(request)
        assert identity is not None
        role, name, mode = identity.role, identity.name, "tokens"
    allowed = [permission for permission in Permission if permission in PERMISSIONS[role]]
    return respond(
        WhoamiBody.model_construct(
            mode=mode, name=name, role=role.value, permissions=[p.value for p in allowed]
        )
    )
