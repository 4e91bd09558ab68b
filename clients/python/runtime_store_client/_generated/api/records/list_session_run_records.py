from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.record_page_body import RecordPageBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    session_id: str,
    *,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["cursor"] = cursor

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sessions/{session_id}/records".format(session_id=quote(str(session_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RecordPageBody | None:
    if response.status_code == 200:
        response_200 = RecordPageBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RecordPageBody]:
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
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[Problem | RecordPageBody]:
    """ List a session's records

     Every record of every run of the session, in commit order, page by page.

    A reader that pages while writers commit never skips a record and never sees one twice.
    A page also stops early once its payloads exceed the byte budget (at least one record).

    Args:
        session_id (str): The session ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RecordPageBody]
     """


    kwargs = _get_kwargs(
        session_id=session_id,
cursor=cursor,
limit=limit,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    session_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Problem | RecordPageBody | None:
    """ List a session's records

     Every record of every run of the session, in commit order, page by page.

    A reader that pages while writers commit never skips a record and never sees one twice.
    A page also stops early once its payloads exceed the byte budget (at least one record).

    Args:
        session_id (str): The session ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RecordPageBody
     """


    return sync_detailed(
        session_id=session_id,
client=client,
cursor=cursor,
limit=limit,

    ).parsed

async def asyncio_detailed(
    session_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[Problem | RecordPageBody]:
    """ List a session's records

     Every record of every run of the session, in commit order, page by page.

    A reader that pages while writers commit never skips a record and never sees one twice.
    A page also stops early once its payloads exceed the byte budget (at least one record).

    Args:
        session_id (str): The session ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RecordPageBody]
     """


    kwargs = _get_kwargs(
        session_id=session_id,
cursor=cursor,
limit=limit,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    session_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Problem | RecordPageBody | None:
    """ List a session's records

     Every record of every run of the session, in commit order, page by page.

    A reader that pages while writers commit never skips a record and never sees one twice.
    A page also stops early once its payloads exceed the byte budget (at least one record).

    Args:
        session_id (str): The session ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RecordPageBody
     """


    return (await asyncio_detailed(
        session_id=session_id,
client=client,
cursor=cursor,
limit=limit,

    )).parsed
