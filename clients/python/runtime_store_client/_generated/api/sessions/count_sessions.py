from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.status_counts_body import StatusCountsBody
from ...types import UNSET, Unset
from typing import cast
import datetime



def _get_kwargs(
    *,
    created_after: datetime.datetime | None | Unset = UNSET,
    created_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 10000,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

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

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/session-counts",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | StatusCountsBody | None:
    if response.status_code == 200:
        response_200 = StatusCountsBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | StatusCountsBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    created_after: datetime.datetime | None | Unset = UNSET,
    created_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 10000,

) -> Response[Problem | StatusCountsBody]:
    """ Count sessions by status

     How many sessions of each status (`active`, `ended`) `GET /v1/sessions` lists with
    these filters. Each count reads at most `limit` sessions, so its cost is bounded
    whatever the number of sessions: a count equal to `limit` means "at least `limit`".
    Each status is counted on its own, so counts taken while writers commit may not add
    up to one moment.

    Args:
        created_after (datetime.datetime | None | Unset): Only sessions created at or after this
            time.
        created_before (datetime.datetime | None | Unset): Only sessions created before this time
            (half-open range).
        limit (int | Unset): The bound of each count: a count stops there (at least that many).
            Default: 10000.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | StatusCountsBody]
     """


    kwargs = _get_kwargs(
        created_after=created_after,
created_before=created_before,
limit=limit,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    created_after: datetime.datetime | None | Unset = UNSET,
    created_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 10000,

) -> Problem | StatusCountsBody | None:
    """ Count sessions by status

     How many sessions of each status (`active`, `ended`) `GET /v1/sessions` lists with
    these filters. Each count reads at most `limit` sessions, so its cost is bounded
    whatever the number of sessions: a count equal to `limit` means "at least `limit`".
    Each status is counted on its own, so counts taken while writers commit may not add
    up to one moment.

    Args:
        created_after (datetime.datetime | None | Unset): Only sessions created at or after this
            time.
        created_before (datetime.datetime | None | Unset): Only sessions created before this time
            (half-open range).
        limit (int | Unset): The bound of each count: a count stops there (at least that many).
            Default: 10000.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | StatusCountsBody
     """


    return sync_detailed(
        client=client,
created_after=created_after,
created_before=created_before,
limit=limit,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    created_after: datetime.datetime | None | Unset = UNSET,
    created_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 10000,

) -> Response[Problem | StatusCountsBody]:
    """ Count sessions by status

     How many sessions of each status (`active`, `ended`) `GET /v1/sessions` lists with
    these filters. Each count reads at most `limit` sessions, so its cost is bounded
    whatever the number of sessions: a count equal to `limit` means "at least `limit`".
    Each status is counted on its own, so counts taken while writers commit may not add
    up to one moment.

    Args:
        created_after (datetime.datetime | None | Unset): Only sessions created at or after this
            time.
        created_before (datetime.datetime | None | Unset): Only sessions created before this time
            (half-open range).
        limit (int | Unset): The bound of each count: a count stops there (at least that many).
            Default: 10000.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | StatusCountsBody]
     """


    kwargs = _get_kwargs(
        created_after=created_after,
created_before=created_before,
limit=limit,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    created_after: datetime.datetime | None | Unset = UNSET,
    created_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 10000,

) -> Problem | StatusCountsBody | None:
    """ Count sessions by status

     How many sessions of each status (`active`, `ended`) `GET /v1/sessions` lists with
    these filters. Each count reads at most `limit` sessions, so its cost is bounded
    whatever the number of sessions: a count equal to `limit` means "at least `limit`".
    Each status is counted on its own, so counts taken while writers commit may not add
    up to one moment.

    Args:
        created_after (datetime.datetime | None | Unset): Only sessions created at or after this
            time.
        created_before (datetime.datetime | None | Unset): Only sessions created before this time
            (half-open range).
        limit (int | Unset): The bound of each count: a count stops there (at least that many).
            Default: 10000.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | StatusCountsBody
     """


    return (await asyncio_detailed(
        client=client,
created_after=created_after,
created_before=created_before,
limit=limit,

    )).parsed
