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
    run_id: str,
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
        "url": "/v1/runs/{run_id}/records/stream".format(run_id=quote(str(run_id), safe=""),),
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
    run_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    last_event_id: None | str | Unset = UNSET,

) -> Response[Any | Problem]:
    """ Follow a run's records live

     Every record of the run after `cursor` (a record ID, as a page's `next_cursor`),
    then each new one as it commits. Ends with `event: end` once the run is completed,
    failed or canceled and its last record was sent, or when its session is purged; a
    suspended run's stream stays open. Heartbeat comments come at least every 15 s.

    Args:
        run_id (str): The run ID.
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
        run_id=run_id,
cursor=cursor,
last_event_id=last_event_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    run_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    last_event_id: None | str | Unset = UNSET,

) -> Any | Problem | None:
    """ Follow a run's records live

     Every record of the run after `cursor` (a record ID, as a page's `next_cursor`),
    then each new one as it commits. Ends with `event: end` once the run is completed,
    failed or canceled and its last record was sent, or when its session is purged; a
    suspended run's stream stays open. Heartbeat comments come at least every 15 s.

    Args:
        run_id (str): The run ID.
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
        run_id=run_id,
client=client,
cursor=cursor,
last_event_id=last_event_id,

    ).parsed

async def asyncio_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    last_event_id: None | str | Unset = UNSET,

) -> Response[Any | Problem]:
    """ Follow a run's records live

     Every record of the run after `cursor` (a record ID, as a page's `next_cursor`),
    then each new one as it commits. Ends with `event: end` once the run is completed,
    failed or canceled and its last record was sent, or when its session is purged; a
    suspended run's stream stays open. Heartbeat comments come at least every 15 s.

    Args:
        run_id (str): The run ID.
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
        run_id=run_id,
cursor=cursor,
last_event_id=last_event_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    run_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    last_event_id: None | str | Unset = UNSET,

) -> Any | Problem | None:
    """ Follow a run's records live

     Every record of the run after `cursor` (a record ID, as a page's `next_cursor`),
    then each new one as it commits. Ends with `event: end` once the run is completed,
    failed or canceled and its last record was sent, or when its session is purged; a
    suspended run's stream stays open. Heartbeat comments come at least every 15 s.

    Args:
        run_id (str): The run ID.
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
        run_id=run_id,
client=client,
cursor=cursor,
last_event_id=last_event_id,

    )).parsed
