from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.append_memory_request import AppendMemoryRequest
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    agent_id: str,
    run_id: str,
    *,
    body: AppendMemoryRequest,
    idempotency_key: str | Unset = '',

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/agents/{agent_id}/runs/{run_id}/memory".format(agent_id=quote(str(agent_id), safe=""),run_id=quote(str(run_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Problem | None:
    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Problem]:
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
    body: AppendMemoryRequest,
    idempotency_key: str | Unset = '',

) -> Response[Any | Problem]:
    """ Append memory events

     Append the events atomically, in order; an empty list is a no-op.

    Args:
        agent_id (str): The agent ID.
        run_id (str): The run ID.
        idempotency_key (str | Unset): Makes a retry of this append a no-op once one attempt was
            stored (memory events carry no event keys); the same key with other events is
            `event_conflict`. The Python client sends one per call. Default: ''.
        body (AppendMemoryRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,
run_id=run_id,
body=body,
idempotency_key=idempotency_key,

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
    body: AppendMemoryRequest,
    idempotency_key: str | Unset = '',

) -> Any | Problem | None:
    """ Append memory events

     Append the events atomically, in order; an empty list is a no-op.

    Args:
        agent_id (str): The agent ID.
        run_id (str): The run ID.
        idempotency_key (str | Unset): Makes a retry of this append a no-op once one attempt was
            stored (memory events carry no event keys); the same key with other events is
            `event_conflict`. The Python client sends one per call. Default: ''.
        body (AppendMemoryRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return sync_detailed(
        agent_id=agent_id,
run_id=run_id,
client=client,
body=body,
idempotency_key=idempotency_key,

    ).parsed

async def asyncio_detailed(
    agent_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient,
    body: AppendMemoryRequest,
    idempotency_key: str | Unset = '',

) -> Response[Any | Problem]:
    """ Append memory events

     Append the events atomically, in order; an empty list is a no-op.

    Args:
        agent_id (str): The agent ID.
        run_id (str): The run ID.
        idempotency_key (str | Unset): Makes a retry of this append a no-op once one attempt was
            stored (memory events carry no event keys); the same key with other events is
            `event_conflict`. The Python client sends one per call. Default: ''.
        body (AppendMemoryRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,
run_id=run_id,
body=body,
idempotency_key=idempotency_key,

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
    body: AppendMemoryRequest,
    idempotency_key: str | Unset = '',

) -> Any | Problem | None:
    """ Append memory events

     Append the events atomically, in order; an empty list is a no-op.

    Args:
        agent_id (str): The agent ID.
        run_id (str): The run ID.
        idempotency_key (str | Unset): Makes a retry of this append a no-op once one attempt was
            stored (memory events carry no event keys); the same key with other events is
            `event_conflict`. The Python client sends one per call. Default: ''.
        body (AppendMemoryRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return (await asyncio_detailed(
        agent_id=agent_id,
run_id=run_id,
client=client,
body=body,
idempotency_key=idempotency_key,

    )).parsed
