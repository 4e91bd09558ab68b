from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.record_counts_body import RecordCountsBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    run_id: list[str] | Unset = UNSET,
    session_id: list[str] | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_run_id: list[str] | Unset = UNSET
    if not isinstance(run_id, Unset):
        json_run_id = run_id


    params["run_id"] = json_run_id

    json_session_id: list[str] | Unset = UNSET
    if not isinstance(session_id, Unset):
        json_session_id = session_id


    params["session_id"] = json_session_id


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/record-counts",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RecordCountsBody | None:
    if response.status_code == 200:
        response_200 = RecordCountsBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RecordCountsBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    run_id: list[str] | Unset = UNSET,
    session_id: list[str] | Unset = UNSET,

) -> Response[Problem | RecordCountsBody]:
    """ Count the records of runs and sessions

     The number of records each run named holds, and each session named (all its runs
    together), read from counters the store keeps: one lookup per ID. At most
    100 IDs per request, runs and sessions together; unknown and purged
    IDs are left out of the answer.

    Args:
        run_id (list[str] | Unset): A run whose records to count (repeatable).
        session_id (list[str] | Unset): A session whose records to count (repeatable).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RecordCountsBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
session_id=session_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    run_id: list[str] | Unset = UNSET,
    session_id: list[str] | Unset = UNSET,

) -> Problem | RecordCountsBody | None:
    """ Count the records of runs and sessions

     The number of records each run named holds, and each session named (all its runs
    together), read from counters the store keeps: one lookup per ID. At most
    100 IDs per request, runs and sessions together; unknown and purged
    IDs are left out of the answer.

    Args:
        run_id (list[str] | Unset): A run whose records to count (repeatable).
        session_id (list[str] | Unset): A session whose records to count (repeatable).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RecordCountsBody
     """


    return sync_detailed(
        client=client,
run_id=run_id,
session_id=session_id,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    run_id: list[str] | Unset = UNSET,
    session_id: list[str] | Unset = UNSET,

) -> Response[Problem | RecordCountsBody]:
    """ Count the records of runs and sessions

     The number of records each run named holds, and each session named (all its runs
    together), read from counters the store keeps: one lookup per ID. At most
    100 IDs per request, runs and sessions together; unknown and purged
    IDs are left out of the answer.

    Args:
        run_id (list[str] | Unset): A run whose records to count (repeatable).
        session_id (list[str] | Unset): A session whose records to count (repeatable).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RecordCountsBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
session_id=session_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    run_id: list[str] | Unset = UNSET,
    session_id: list[str] | Unset = UNSET,

) -> Problem | RecordCountsBody | None:
    """ Count the records of runs and sessions

     The number of records each run named holds, and each session named (all its runs
    together), read from counters the store keeps: one lookup per ID. At most
    100 IDs per request, runs and sessions together; unknown and purged
    IDs are left out of the answer.

    Args:
        run_id (list[str] | Unset): A run whose records to count (repeatable).
        session_id (list[str] | Unset): A session whose records to count (repeatable).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RecordCountsBody
     """


    return (await asyncio_detailed(
        client=client,
run_id=run_id,
session_id=session_id,

    )).parsed
