from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    session_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sessions/{session_id}/export".format(session_id=quote(str(session_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = cast(str, response.content)
        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 410:
        response_410 = Problem.from_dict(response.json())



        return response_410

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    session_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | str]:
    """ Export a session

     Everything of the session, one JSON object per line, from one snapshot: a header
    `{"format": "runtime-store.session/2", "session": …}`, every run (meta, remembered
    lifecycle keys, checkpoint as base64), every record in session order (payload as its
    exact text), every memory event and memory append of its runs, and a trailer with the
    counts. `POST /v1/sessions/import` recreates it byte for byte on any database.

    Args:
        session_id (str): The session ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        session_id=session_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    session_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | str | None:
    """ Export a session

     Everything of the session, one JSON object per line, from one snapshot: a header
    `{"format": "runtime-store.session/2", "session": …}`, every run (meta, remembered
    lifecycle keys, checkpoint as base64), every record in session order (payload as its
    exact text), every memory event and memory append of its runs, and a trailer with the
    counts. `POST /v1/sessions/import` recreates it byte for byte on any database.

    Args:
        session_id (str): The session ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return sync_detailed(
        session_id=session_id,
client=client,

    ).parsed

async def asyncio_detailed(
    session_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | str]:
    """ Export a session

     Everything of the session, one JSON object per line, from one snapshot: a header
    `{"format": "runtime-store.session/2", "session": …}`, every run (meta, remembered
    lifecycle keys, checkpoint as base64), every record in session order (payload as its
    exact text), every memory event and memory append of its runs, and a trailer with the
    counts. `POST /v1/sessions/import` recreates it byte for byte on any database.

    Args:
        session_id (str): The session ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        session_id=session_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    session_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | str | None:
    """ Export a session

     Everything of the session, one JSON object per line, from one snapshot: a header
    `{"format": "runtime-store.session/2", "session": …}`, every run (meta, remembered
    lifecycle keys, checkpoint as base64), every record in session order (payload as its
    exact text), every memory event and memory append of its runs, and a trailer with the
    counts. `POST /v1/sessions/import` recreates it byte for byte on any database.

    Args:
        session_id (str): The session ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return (await asyncio_detailed(
        session_id=session_id,
client=client,

    )).parsed
