from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.begin_run_seed_request import BeginRunSeedRequest
from ...models.problem import Problem
from ...models.run_seed_body import RunSeedBody
from typing import cast



def _get_kwargs(
    run_id: str,
    *,
    body: BeginRunSeedRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/runs/{run_id}/seed/attempts".format(run_id=quote(str(run_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RunSeedBody | None:
    if response.status_code == 200:
        response_200 = RunSeedBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RunSeedBody]:
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
    body: BeginRunSeedRequest,

) -> Response[Problem | RunSeedBody]:
    """ Begin a seed attempt

     Declare one attempt of the run's seed: freeze its operation (agent, session,
    command) and resolve its source (`next_turn`: the source's terminal record;
    `continuation`: its `source_end_id`). It creates no run and writes no record; the
    answer's `end_id` is the attempt's history end.

    The declaration's `run_id` must be the path's. Its canonical encoding (compact JSON,
    `{"declaration": {…}}`) may hold at most 1,000,000 bytes, however the body spells it
    (413 `payload_too_large`). The same declaration again is an exact retry (also after
    publication); another declaration of the attempt, another operation for the run ID, or
    a new attempt once one is published is `seed_conflict`; an attempt settled without
    publication is `preparation_abandoned`; a run ID already started is `run_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        body (BeginRunSeedRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunSeedBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    run_id: str,
    *,
    client: AuthenticatedClient,
    body: BeginRunSeedRequest,

) -> Problem | RunSeedBody | None:
    """ Begin a seed attempt

     Declare one attempt of the run's seed: freeze its operation (agent, session,
    command) and resolve its source (`next_turn`: the source's terminal record;
    `continuation`: its `source_end_id`). It creates no run and writes no record; the
    answer's `end_id` is the attempt's history end.

    The declaration's `run_id` must be the path's. Its canonical encoding (compact JSON,
    `{"declaration": {…}}`) may hold at most 1,000,000 bytes, however the body spells it
    (413 `payload_too_large`). The same declaration again is an exact retry (also after
    publication); another declaration of the attempt, another operation for the run ID, or
    a new attempt once one is published is `seed_conflict`; an attempt settled without
    publication is `preparation_abandoned`; a run ID already started is `run_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        body (BeginRunSeedRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunSeedBody
     """


    return sync_detailed(
        run_id=run_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    body: BeginRunSeedRequest,

) -> Response[Problem | RunSeedBody]:
    """ Begin a seed attempt

     Declare one attempt of the run's seed: freeze its operation (agent, session,
    command) and resolve its source (`next_turn`: the source's terminal record;
    `continuation`: its `source_end_id`). It creates no run and writes no record; the
    answer's `end_id` is the attempt's history end.

    The declaration's `run_id` must be the path's. Its canonical encoding (compact JSON,
    `{"declaration": {…}}`) may hold at most 1,000,000 bytes, however the body spells it
    (413 `payload_too_large`). The same declaration again is an exact retry (also after
    publication); another declaration of the attempt, another operation for the run ID, or
    a new attempt once one is published is `seed_conflict`; an attempt settled without
    publication is `preparation_abandoned`; a run ID already started is `run_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        body (BeginRunSeedRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunSeedBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    run_id: str,
    *,
    client: AuthenticatedClient,
    body: BeginRunSeedRequest,

) -> Problem | RunSeedBody | None:
    """ Begin a seed attempt

     Declare one attempt of the run's seed: freeze its operation (agent, session,
    command) and resolve its source (`next_turn`: the source's terminal record;
    `continuation`: its `source_end_id`). It creates no run and writes no record; the
    answer's `end_id` is the attempt's history end.

    The declaration's `run_id` must be the path's. Its canonical encoding (compact JSON,
    `{"declaration": {…}}`) may hold at most 1,000,000 bytes, however the body spells it
    (413 `payload_too_large`). The same declaration again is an exact retry (also after
    publication); another declaration of the attempt, another operation for the run ID, or
    a new attempt once one is published is `seed_conflict`; an attempt settled without
    publication is `preparation_abandoned`; a run ID already started is `run_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        body (BeginRunSeedRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunSeedBody
     """


    return (await asyncio_detailed(
        run_id=run_id,
client=client,
body=body,

    )).parsed
