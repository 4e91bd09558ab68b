from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.snapshot_body import SnapshotBody
from typing import cast



def _get_kwargs(
    agent_id: str,
    run_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/agents/{agent_id}/runs/{run_id}/memory".format(agent_id=quote(str(agent_id), safe=""),run_id=quote(str(run_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SnapshotBody | None:
    if response.status_code == 200:
        response_200 = SnapshotBody.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | SnapshotBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    agent_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | SnapshotBody]:
    """ Load a run's memory

     Every memory event of the agent's run, in append order; empty for an unknown run,
    `session_purged` for a run whose session was purged (its memory went with it).

    Args:
        agent_id (str): The agent ID.
        run_id (str): The run ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SnapshotBody]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,
run_id=run_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    agent_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | SnapshotBody | None:
    """ Load a run's memory

     Every memory event of the agent's run, in append order; empty for an unknown run,
    `session_purged` for a run whose session was purged (its memory went with it).

    Args:
        agent_id (str): The agent ID.
        run_id (str): The run ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SnapshotBody
     """


    return sync_detailed(
        agent_id=agent_id,
run_id=run_id,
client=client,

    ).parsed

async def asyncio_detailed(
    agent_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | SnapshotBody]:
    """ Load a run's memory

     Every memory event of the agent's run, in append order; empty for an unknown run,
    `session_purged` for a run whose session was purged (its memory went with it).

    Args:
        agent_id (str): The agent ID.
        run_id (str): The run ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SnapshotBody]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,
run_id=run_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    agent_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | SnapshotBody | None:
    """ Load a run's memory

     Every memory event of the agent's run, in append order; empty for an unknown run,
    `session_purged` for a run whose session was purged (its memory went with it).

    Args:
        agent_id (str): The agent ID.
        run_id (str): The run ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SnapshotBody
     """


    return (await asyncio_detailed(
        agent_id=agent_id,
run_id=run_id,
client=client,

    )).parsed
