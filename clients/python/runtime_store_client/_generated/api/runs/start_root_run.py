from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.root_run_start_request import RootRunStartRequest
from ...models.root_run_start_result_body import RootRunStartResultBody
from typing import cast



def _get_kwargs(
    *,
    body: RootRunStartRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/runs/root-starts",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RootRunStartResultBody | None:
    if response.status_code == 200:
        response_200 = RootRunStartResultBody.from_dict(response.json())



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

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

    if response.status_code == 410:
        response_410 = Problem.from_dict(response.json())



        return response_410

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RootRunStartResultBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: RootRunStartRequest,

) -> Response[Problem | RootRunStartResultBody]:
    """ Start a root run

     Store a root run of a session with its `run_started` record, in one transaction.

    In an active session the outcome is `proceed` (status `running`). In an ended session the
    run is created already canceled (`stop`, reason `session_ended`) with the `canceled`
    record after `run_started`. An exact retry returns the original record IDs with
    `inserted = false` and the original outcome; a changed retry is `run_conflict`. A
    continuation (`predecessor_run_id`) needs a suspended predecessor with the same session,
    agent and parent.

    `request_digest` (64 lowercase hex, optional; every engine start takes it) is stored by
    the run's first start and compared first on every retry: another digest, or one missing
    on either side, is `run_conflict`. A run no longer `running` retried with its digest
    answers its original outcome, status and record IDs even when the retry proposes a new
    `started_at` (and record times); every other field must be the original's.

    `run.seed_end_id` (every start takes it; absent, null or "" for none) attaches the run
    ID's published seed: its history end, else `seed_not_found`, `seed_not_published` or
    `seed_conflict`. A run ID prepared for a seed cannot start without it (`seed_conflict`).

    Args:
        body (RootRunStartRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RootRunStartResultBody]
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
    body: RootRunStartRequest,

) -> Problem | RootRunStartResultBody | None:
    """ Start a root run

     Store a root run of a session with its `run_started` record, in one transaction.

    In an active session the outcome is `proceed` (status `running`). In an ended session the
    run is created already canceled (`stop`, reason `session_ended`) with the `canceled`
    record after `run_started`. An exact retry returns the original record IDs with
    `inserted = false` and the original outcome; a changed retry is `run_conflict`. A
    continuation (`predecessor_run_id`) needs a suspended predecessor with the same session,
    agent and parent.

    `request_digest` (64 lowercase hex, optional; every engine start takes it) is stored by
    the run's first start and compared first on every retry: another digest, or one missing
    on either side, is `run_conflict`. A run no longer `running` retried with its digest
    answers its original outcome, status and record IDs even when the retry proposes a new
    `started_at` (and record times); every other field must be the original's.

    `run.seed_end_id` (every start takes it; absent, null or "" for none) attaches the run
    ID's published seed: its history end, else `seed_not_found`, `seed_not_published` or
    `seed_conflict`. A run ID prepared for a seed cannot start without it (`seed_conflict`).

    Args:
        body (RootRunStartRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RootRunStartResultBody
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: RootRunStartRequest,

) -> Response[Problem | RootRunStartResultBody]:
    """ Start a root run

     Store a root run of a session with its `run_started` record, in one transaction.

    In an active session the outcome is `proceed` (status `running`). In an ended session the
    run is created already canceled (`stop`, reason `session_ended`) with the `canceled`
    record after `run_started`. An exact retry returns the original record IDs with
    `inserted = false` and the original outcome; a changed retry is `run_conflict`. A
    continuation (`predecessor_run_id`) needs a suspended predecessor with the same session,
    agent and parent.

    `request_digest` (64 lowercase hex, optional; every engine start takes it) is stored by
    the run's first start and compared first on every retry: another digest, or one missing
    on either side, is `run_conflict`. A run no longer `running` retried with its digest
    answers its original outcome, status and record IDs even when the retry proposes a new
    `started_at` (and record times); every other field must be the original's.

    `run.seed_end_id` (every start takes it; absent, null or "" for none) attaches the run
    ID's published seed: its history end, else `seed_not_found`, `seed_not_published` or
    `seed_conflict`. A run ID prepared for a seed cannot start without it (`seed_conflict`).

    Args:
        body (RootRunStartRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RootRunStartResultBody]
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
    body: RootRunStartRequest,

) -> Problem | RootRunStartResultBody | None:
    """ Start a root run

     Store a root run of a session with its `run_started` record, in one transaction.

    In an active session the outcome is `proceed` (status `running`). In an ended session the
    run is created already canceled (`stop`, reason `session_ended`) with the `canceled`
    record after `run_started`. An exact retry returns the original record IDs with
    `inserted = false` and the original outcome; a changed retry is `run_conflict`. A
    continuation (`predecessor_run_id`) needs a suspended predecessor with the same session,
    agent and parent.

    `request_digest` (64 lowercase hex, optional; every engine start takes it) is stored by
    the run's first start and compared first on every retry: another digest, or one missing
    on either side, is `run_conflict`. A run no longer `running` retried with its digest
    answers its original outcome, status and record IDs even when the retry proposes a new
    `started_at` (and record times); every other field must be the original's.

    `run.seed_end_id` (every start takes it; absent, null or "" for none) attaches the run
    ID's published seed: its history end, else `seed_not_found`, `seed_not_published` or
    `seed_conflict`. A run ID prepared for a seed cannot start without it (`seed_conflict`).

    Args:
        body (RootRunStartRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RootRunStartResultBody
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
