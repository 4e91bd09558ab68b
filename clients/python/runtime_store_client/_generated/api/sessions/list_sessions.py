from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.session_page_body import SessionPageBody
from ...models.session_status import SessionStatus
from ...types import UNSET, Unset
from typing import cast
import datetime



def _get_kwargs(
    *,
    status: list[SessionStatus] | Unset = UNSET,
    created_after: datetime.datetime | None | Unset = UNSET,
    created_before: datetime.datetime | None | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_status: list[str] | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = []
        for status_item_data in status:
            status_item = status_item_data.value
            json_status.append(status_item)


    params["status"] = json_status

    json_created_after: None | str | Unset
    if isinstance(created_after, Unset):
        json_created_after = UNSET
    elif isinstance(created_after, datetime.datetime):
        json_created_after = created_after.isoformat()
    else:
        json_created_after = created_after
    params["created_after"] = json_created_after

    json_created_before: None | str | Unset
    if isinstance(created_before, Unset):
        json_created_before = UNSET
    elif isinstance(created_before, datetime.datetime):
        json_created_before = created_before.isoformat()
    else:
        json_created_before = created_before
    params["created_before"] = json_created_before

    params["cursor"] = cursor

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sessions",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SessionPageBody | None:
    if response.status_code == 200:
        response_200 = SessionPageBody.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | SessionPageBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    status: list[SessionStatus] | Unset = UNSET,
    created_after: datetime.datetime | None | Unset = UNSET,
    created_before: datetime.datetime | None | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[Problem | SessionPageBody]:
    """ List sessions

     Sessions newest `created_at` first, ties by `session_id` ascending; purged sessions
    never appear. A cursor only continues the list with the same filters.

    Args:
        status (list[SessionStatus] | Unset): Only sessions in these statuses (repeatable);
            default both.
        created_after (datetime.datetime | None | Unset): Only sessions created at or after this
            time.
        created_before (datetime.datetime | None | Unset): Only sessions created before this time
            (half-open range).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionPageBody]
     """


    kwargs = _get_kwargs(
        status=status,
created_after=created_after,
created_before=created_before,
cursor=cursor,
limit=limit,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    status: list[SessionStatus] | Unset = UNSET,
    created_after: datetime.datetime | None | Unset = UNSET,
    created_before: datetime.datetime | None | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Problem | SessionPageBody | None:
    """ List sessions

     Sessions newest `created_at` first, ties by `session_id` ascending; purged sessions
    never appear. A cursor only continues the list with the same filters.

    Args:
        status (list[SessionStatus] | Unset): Only sessions in these statuses (repeatable);
            default both.
        created_after (datetime.datetime | None | Unset): Only sessions created at or after this
            time.
        created_before (datetime.datetime | None | Unset): Only sessions created before this time
            (half-open range).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionPageBody
     """


    return sync_detailed(
        client=client,
status=status,
created_after=created_after,
created_before=created_before,
cursor=cursor,
limit=limit,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    status: list[SessionStatus] | Unset = UNSET,
    created_after: datetime.datetime | None | Unset = UNSET,
    created_before: datetime.datetime | None | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[Problem | SessionPageBody]:
    """ List sessions

     Sessions newest `created_at` first, ties by `session_id` ascending; purged sessions
    never appear. A cursor only continues the list with the same filters.

    Args:
        status (list[SessionStatus] | Unset): Only sessions in these statuses (repeatable);
            default both.
        created_after (datetime.datetime | None | Unset): Only sessions created at or after this
            time.
        created_before (datetime.datetime | None | Unset): Only sessions created before this time
            (half-open range).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionPageBody]
     """


    kwargs = _get_kwargs(
        status=status,
created_after=created_after,
created_before=created_before,
cursor=cursor,
limit=limit,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    status: list[SessionStatus] | Unset = UNSET,
    created_after: datetime.datetime | None | Unset = UNSET,
    created_before: datetime.datetime | None | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Problem | SessionPageBody | None:
    """ List sessions

     Sessions newest `created_at` first, ties by `session_id` ascending; purged sessions
    never appear. A cursor only continues the list with the same filters.

    Args:
        status (list[SessionStatus] | Unset): Only sessions in these statuses (repeatable);
            default both.
        created_after (datetime.datetime | None | Unset): Only sessions created at or after this
            time.
        created_before (datetime.datetime | None | Unset): Only sessions created before this time
            (half-open range).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionPageBody
     """


    return (await asyncio_detailed(
        client=client,
status=status,
created_after=created_after,
created_before=created_before,
cursor=cursor,
limit=limit,

    )).parsed
