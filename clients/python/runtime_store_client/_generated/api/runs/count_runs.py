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
    agent_id: str | Unset = '',
    session_id: str | Unset = '',
    parent_run_id: str | Unset = '',
    label: list[str] | Unset = UNSET,
    started_after: datetime.datetime | None | Unset = UNSET,
    started_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 10000,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["agent_id"] = agent_id

    params["session_id"] = session_id

    params["parent_run_id"] = parent_run_id

    json_label: list[str] | Unset = UNSET
    if not isinstance(label, Unset):
        json_label = label


    params["label"] = json_label

    json_started_after: None | str | Unset
    if isinstance(started_after, Unset):
        json_started_after = UNSET
    elif isinstance(started_after, datetime.datetime):
        json_started_after = started_after.isoformat()
    else:
        json_started_after = started_after
    params["started_after"] = json_started_after

    json_started_before: None | str | Unset
    if isinstance(started_before, Unset):
        json_started_before = UNSET
    elif isinstance(started_before, datetime.datetime):
        json_started_before = started_before.isoformat()
    else:
        json_started_before = started_before
    params["started_before"] = json_started_before

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/run-counts",
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
    agent_id: str | Unset = '',
    session_id: str | Unset = '',
    parent_run_id: str | Unset = '',
    label: list[str] | Unset = UNSET,
    started_after: datetime.datetime | None | Unset = UNSET,
    started_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 10000,

) -> Response[Problem | StatusCountsBody]:
    """ Count runs by status

     How many runs of each status `GET /v1/runs` finds with these filters (the same
    filters, meaning the same, refused the same way; no `status`, `cursor` or page
    `limit`). Every run status is present, 0 included. Each count reads at most `limit`
    runs, so its cost is bounded whatever the number of runs: a count equal to `limit`
    means "at least `limit`". Each status is counted on its own, so counts taken while
    writers commit may not add up to one moment.

    Args:
        agent_id (str | Unset): Only runs of this agent. Default: ''.
        session_id (str | Unset): Only runs of this session. Default: ''.
        parent_run_id (str | Unset): Only children of this run. Default: ''.
        label (list[str] | Unset): Only runs carrying this label, as `key:value` (the key ends at
            the first colon); repeatable, every label must match.
        started_after (datetime.datetime | None | Unset): Only runs started at or after this time.
        started_before (datetime.datetime | None | Unset): Only runs started before this time
            (half-open).
        limit (int | Unset): The bound of each count: a count stops there (at least that many).
            Default: 10000.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | StatusCountsBody]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,
session_id=session_id,
parent_run_id=parent_run_id,
label=label,
started_after=started_after,
started_before=started_before,
limit=limit,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    agent_id: str | Unset = '',
    session_id: str | Unset = '',
    parent_run_id: str | Unset = '',
    label: list[str] | Unset = UNSET,
    started_after: datetime.datetime | None | Unset = UNSET,
    started_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 10000,

) -> Problem | StatusCountsBody | None:
    """ Count runs by status

     How many runs of each status `GET /v1/runs` finds with these filters (the same
    filters, meaning the same, refused the same way; no `status`, `cursor` or page
    `limit`). Every run status is present, 0 included. Each count reads at most `limit`
    runs, so its cost is bounded whatever the number of runs: a count equal to `limit`
    means "at least `limit`". Each status is counted on its own, so counts taken while
    writers commit may not add up to one moment.

    Args:
        agent_id (str | Unset): Only runs of this agent. Default: ''.
        session_id (str | Unset): Only runs of this session. Default: ''.
        parent_run_id (str | Unset): Only children of this run. Default: ''.
        label (list[str] | Unset): Only runs carrying this label, as `key:value` (the key ends at
            the first colon); repeatable, every label must match.
        started_after (datetime.datetime | None | Unset): Only runs started at or after this time.
        started_before (datetime.datetime | None | Unset): Only runs started before this time
            (half-open).
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
agent_id=agent_id,
session_id=session_id,
parent_run_id=parent_run_id,
label=label,
started_after=started_after,
started_before=started_before,
limit=limit,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    agent_id: str | Unset = '',
    session_id: str | Unset = '',
    parent_run_id: str | Unset = '',
    label: list[str] | Unset = UNSET,
    started_after: datetime.datetime | None | Unset = UNSET,
    started_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 10000,

) -> Response[Problem | StatusCountsBody]:
    """ Count runs by status

     How many runs of each status `GET /v1/runs` finds with these filters (the same
    filters, meaning the same, refused the same way; no `status`, `cursor` or page
    `limit`). Every run status is present, 0 included. Each count reads at most `limit`
    runs, so its cost is bounded whatever the number of runs: a count equal to `limit`
    means "at least `limit`". Each status is counted on its own, so counts taken while
    writers commit may not add up to one moment.

    Args:
        agent_id (str | Unset): Only runs of this agent. Default: ''.
        session_id (str | Unset): Only runs of this session. Default: ''.
        parent_run_id (str | Unset): Only children of this run. Default: ''.
        label (list[str] | Unset): Only runs carrying this label, as `key:value` (the key ends at
            the first colon); repeatable, every label must match.
        started_after (datetime.datetime | None | Unset): Only runs started at or after this time.
        started_before (datetime.datetime | None | Unset): Only runs started before this time
            (half-open).
        limit (int | Unset): The bound of each count: a count stops there (at least that many).
            Default: 10000.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | StatusCountsBody]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,
session_id=session_id,
parent_run_id=parent_run_id,
label=label,
started_after=started_after,
started_before=started_before,
limit=limit,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    agent_id: str | Unset = '',
    session_id: str | Unset = '',
    parent_run_id: str | Unset = '',
    label: list[str] | Unset = UNSET,
    started_after: datetime.datetime | None | Unset = UNSET,
    started_before: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 10000,

) -> Problem | StatusCountsBody | None:
    """ Count runs by status

     How many runs of each status `GET /v1/runs` finds with these filters (the same
    filters, meaning the same, refused the same way; no `status`, `cursor` or page
    `limit`). Every run status is present, 0 included. Each count reads at most `limit`
    runs, so its cost is bounded whatever the number of runs: a count equal to `limit`
    means "at least `limit`". Each status is counted on its own, so counts taken while
    writers commit may not add up to one moment.

    Args:
        agent_id (str | Unset): Only runs of this agent. Default: ''.
        session_id (str | Unset): Only runs of this session. Default: ''.
        parent_run_id (str | Unset): Only children of this run. Default: ''.
        label (list[str] | Unset): Only runs carrying this label, as `key:value` (the key ends at
            the first colon); repeatable, every label must match.
        started_after (datetime.datetime | None | Unset): Only runs started at or after this time.
        started_before (datetime.datetime | None | Unset): Only runs started before this time
            (half-open).
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
agent_id=agent_id,
session_id=session_id,
parent_run_id=parent_run_id,
label=label,
started_after=started_after,
started_before=started_before,
limit=limit,

    )).parsed
