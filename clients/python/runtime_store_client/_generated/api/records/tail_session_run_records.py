from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    session_id: str,
    *,
    cursor: str | Unset = '',
    last_event_id: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id



    

    params: dict[str, Any] = {}

    params["cursor"] = cursor


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sessions/{session_id}/records/stream".format(session_id=quote(str(session_id), safe=""),),
        "params": params,
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Problem | None:
    if response.status_code == 200:
        response_200 = cast(Any, None)
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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Problem]:
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
    last_event_id: None | str | Unset = UNSET,

) -> Response[Any | Problem]:
    """ Follow a session's records live

     Every record of the session's runs after `cursor` (as a page's `next_cursor`), in
    commit order, then each new one as it commits. Ends with `event: end` when the
    session is purged. Heartbeat comments come at least every 15 s.

    Args:
        session_id (str): The session ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        last_event_id (None | str | Unset): The `id` of the last event received; resumes after it
            and wins over `cursor`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
     """


    kwargs = _get_kwargs(
        session_id=session_id,
cursor=cursor,
last_event_id=last_event_id,

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
    last_event_id: None | str | Unset = UNSET,

) -> Any | Problem | None:
    """ Follow a session's records live

     Every record of the session's runs after `cursor` (as a page's `next_cursor`), in
    commit order, then each new one as it commits. Ends with `event: end` when the
    session is purged. Heartbeat comments come at least every 15 s.

    Args:
        session_id (str): The session ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        last_event_id (None | str | Unset): The `id` of the last event received; resumes after it
            and wins over `cursor`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return sync_detailed(
        session_id=session_id,
client=client,
cursor=cursor,
last_event_id=last_event_id,

    ).parsed

async def asyncio_detailed(
    session_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    last_event_id: None | str | Unset = UNSET,

) -> Response[Any | Problem]:
    """ Follow a session's records live

     Every record of the session's runs after `cursor` (as a page's `next_cursor`), in
    commit order, then each new one as it commits. Ends with `event: end` when the
    session is purged. Heartbeat comments come at least every 15 s.

    Args:
        session_id (str): The session ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        last_event_id (None | str | Unset): The `id` of the last event received; resumes after it
            and wins over `cursor`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
     """


    kwargs = _get_kwargs(
        session_id=session_id,
cursor=cursor,
last_event_id=last_event_id,

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
    last_event_id: None | str | Unset = UNSET,

) -> Any | Problem | None:
    """ Follow a session's records live

     Every record of the session's runs after `cursor` (as a page's `next_cursor`), in
    commit order, then each new one as it commits. Ends with `event: end` when the
    session is purged. Heartbeat comments come at least every 15 s.

    Args:
        session_id (str): The session ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        last_event_id (None | str | Unset): The `id` of the last event received; resumes after it
            and wins over `cursor`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return (await asyncio_detailed(
        session_id=session_id,
client=client,
cursor=cursor,
last_event_id=last_event_id,

    )).parsed
