from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.run_page_body import RunPageBody
from ...models.run_status import RunStatus
from ...types import UNSET, Unset
from typing import cast
import datetime



def _get_kwargs(
    *,
    status: list[RunStatus] | Unset = UNSET,
    agent_id: str | Unset = '',
    session_id: str | Unset = '',
    parent_run_id: str | Unset = '',
    label: list[str] | Unset = UNSET,
    started_after: datetime.datetime | None | Unset = UNSET,
    started_before: datetime.datetime | None | Unset = UNSET,
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

    params["cursor"] = cursor

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RunPageBody | None:
    if response.status_code == 200:
        response_200 = RunPageBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RunPageBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    status: list[RunStatus] | Unset = UNSET,
    agent_id: str | Unset = '',
    session_id: str | Unset = '',
    parent_run_id: str | Unset = '',
    label: list[str] | Unset = UNSET,
    started_after: datetime.datetime | None | Unset = UNSET,
    started_before: datetime.datetime | None | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[Problem | RunPageBody]:
    """ Search runs

     Runs of every session and sessionless runs, newest `started_at` first, ties by
    `run_id` ascending; runs of purged sessions never appear. Naming an unknown session
    or parent matches nothing. A cursor only continues the list with the same filters.

    Args:
        status (list[RunStatus] | Unset): Only runs in these statuses (repeatable).
        agent_id (str | Unset): Only runs of this agent. Default: ''.
        session_id (str | Unset): Only runs of this session. Default: ''.
        parent_run_id (str | Unset): Only children of this run. Default: ''.
        label (list[str] | Unset): Only runs carrying this label, as `key:value` (the key ends at
            the first colon); repeatable, every label must match.
        started_after (datetime.datetime | None | Unset): Only runs started at or after this time.
        started_before (datetime.datetime | None | Unset): Only runs started before this time
            (half-open).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunPageBody]
     """


    kwargs = _get_kwargs(
        status=status,
agent_id=agent_id,
session_id=session_id,
parent_run_id=parent_run_id,
label=label,
started_after=started_after,
started_before=started_before,
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
    status: list[RunStatus] | Unset = UNSET,
    agent_id: str | Unset = '',
    session_id: str | Unset = '',
    parent_run_id: str | Unset = '',
    label: list[str] | Unset = UNSET,
    started_after: datetime.datetime | None | Unset = UNSET,
    started_before: datetime.datetime | None | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Problem | RunPageBody | None:
    """ Search runs

     Runs of every session and sessionless runs, newest `started_at` first, ties by
    `run_id` ascending; runs of purged sessions never appear. Naming an unknown session
    or parent matches nothing. A cursor only continues the list with the same filters.

    Args:
        status (list[RunStatus] | Unset): Only runs in these statuses (repeatable).
        agent_id (str | Unset): Only runs of this agent. Default: ''.
        session_id (str | Unset): Only runs of this session. Default: ''.
        parent_run_id (str | Unset): Only children of this run. Default: ''.
        label (list[str] | Unset): Only runs carrying this label, as `key:value` (the key ends at
            the first colon); repeatable, every label must match.
        started_after (datetime.datetime | None | Unset): Only runs started at or after this time.
        started_before (datetime.datetime | None | Unset): Only runs started before this time
            (half-open).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunPageBody
     """


    return sync_detailed(
        client=client,
status=status,
agent_id=agent_id,
session_id=session_id,
parent_run_id=parent_run_id,
label=label,
started_after=started_after,
started_before=started_before,
cursor=cursor,
limit=limit,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    status: list[RunStatus] | Unset = UNSET,
    agent_id: str | Unset = '',
    session_id: str | Unset = '',
    parent_run_id: str | Unset = '',
    label: list[str] | Unset = UNSET,
    started_after: datetime.datetime | None | Unset = UNSET,
    started_before: datetime.datetime | None | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[Problem | RunPageBody]:
    """ Search runs

     Runs of every session and sessionless runs, newest `started_at` first, ties by
    `run_id` ascending; runs of purged sessions never appear. Naming an unknown session
    or parent matches nothing. A cursor only continues the list with the same filters.

    Args:
        status (list[RunStatus] | Unset): Only runs in these statuses (repeatable).
        agent_id (str | Unset): Only runs of this agent. Default: ''.
        session_id (str | Unset): Only runs of this session. Default: ''.
        parent_run_id (str | Unset): Only children of this run. Default: ''.
        label (list[str] | Unset): Only runs carrying this label, as `key:value` (the key ends at
            the first colon); repeatable, every label must match.
        started_after (datetime.datetime | None | Unset): Only runs started at or after this time.
        started_before (datetime.datetime | None | Unset): Only runs started before this time
            (half-open).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunPageBody]
     """


    kwargs = _get_kwargs(
        status=status,
agent_id=agent_id,
session_id=session_id,
parent_run_id=parent_run_id,
label=label,
started_after=started_after,
started_before=started_before,
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
    status: list[RunStatus] | Unset = UNSET,
    agent_id: str | Unset = '',
    session_id: str | Unset = '',
    parent_run_id: str | Unset = '',
    label: list[str] | Unset = UNSET,
    started_after: datetime.datetime | None | Unset = UNSET,
    started_before: datetime.datetime | None | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Problem | RunPageBody | None:
    """ Search runs

     Runs of every session and sessionless runs, newest `started_at` first, ties by
    `run_id` ascending; runs of purged sessions never appear. Naming an unknown session
    or parent matches nothing. A cursor only continues the list with the same filters.

    Args:
        status (list[RunStatus] | Unset): Only runs in these statuses (repeatable).
        agent_id (str | Unset): Only runs of this agent. Default: ''.
        session_id (str | Unset): Only runs of this session. Default: ''.
        parent_run_id (str | Unset): Only children of this run. Default: ''.
        label (list[str] | Unset): Only runs carrying this label, as `key:value` (the key ends at
            the first colon); repeatable, every label must match.
        started_after (datetime.datetime | None | Unset): Only runs started at or after this time.
        started_before (datetime.datetime | None | Unset): Only runs started before this time
            (half-open).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunPageBody
     """


    return (await asyncio_detailed(
        client=client,
status=status,
agent_id=agent_id,
session_id=session_id,
parent_run_id=parent_run_id,
label=label,
started_after=started_after,
started_before=started_before,
cursor=cursor,
limit=limit,

    )).parsed
