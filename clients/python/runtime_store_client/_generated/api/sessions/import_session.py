from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.session_body import SessionBody
from typing import cast



def _get_kwargs(
    *,
    body: str,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sessions/import",
    }

    _kwargs["content"] = body.payload
    headers["Content-Type"] = "application/x-ndjson"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SessionBody | None:
    if response.status_code == 200:
        response_200 = SessionBody.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())



        return response_415

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())



        return response_500

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | SessionBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: str,

) -> Response[Problem | SessionBody]:
    """ Import a session

     Recreate an exported session, in one transaction, with identical IDs, record IDs,
    session order, bytes, statuses and remembered keys.

    An existing (or purged) session or run ID is `409 import_conflict` naming it; a line
    that breaks a rule is `422 invalid_argument` with its 1-based number in `line` (a file
    cut short is refused at the line its trailer was due). Either way nothing is written.
    The body is bounded by `RUNTIME_STORE_MAX_IMPORT_BYTES` (413 beyond).

    Args:
        body (str): NDJSON: a header line, a line per run, per record (session order), per memory
            event and memory append, and a trailer line with the counts.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionBody]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: str,

) -> Problem | SessionBody | None:
    """ Import a session

     Recreate an exported session, in one transaction, with identical IDs, record IDs,
    session order, bytes, statuses and remembered keys.

    An existing (or purged) session or run ID is `409 import_conflict` naming it; a line
    that breaks a rule is `422 invalid_argument` with its 1-based number in `line` (a file
    cut short is refused at the line its trailer was due). Either way nothing is written.
    The body is bounded by `RUNTIME_STORE_MAX_IMPORT_BYTES` (413 beyond).

    Args:
        body (str): NDJSON: a header line, a line per run, per record (session order), per memory
            event and memory append, and a trailer line with the counts.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionBody
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: str,

) -> Response[Problem | SessionBody]:
    """ Import a session

     Recreate an exported session, in one transaction, with identical IDs, record IDs,
    session order, bytes, statuses and remembered keys.

    An existing (or purged) session or run ID is `409 import_conflict` naming it; a line
    that breaks a rule is `422 invalid_argument` with its 1-based number in `line` (a file
    cut short is refused at the line its trailer was due). Either way nothing is written.
    The body is bounded by `RUNTIME_STORE_MAX_IMPORT_BYTES` (413 beyond).

    Args:
        body (str): NDJSON: a header line, a line per run, per record (session order), per memory
            event and memory append, and a trailer line with the counts.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionBody]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: str,

) -> Problem | SessionBody | None:
    """ Import a session

     Recreate an exported session, in one transaction, with identical IDs, record IDs,
    session order, bytes, statuses and remembered keys.

    An existing (or purged) session or run ID is `409 import_conflict` naming it; a line
    that breaks a rule is `422 invalid_argument` with its 1-based number in `line` (a file
    cut short is refused at the line its trailer was due). Either way nothing is written.
    The body is bounded by `RUNTIME_STORE_MAX_IMPORT_BYTES` (413 beyond).

    Args:
        body (str): NDJSON: a header line, a line per run, per record (session order), per memory
            event and memory append, and a trailer line with the counts.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionBody
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
