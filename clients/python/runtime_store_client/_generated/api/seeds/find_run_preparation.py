from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.preparation_answer_body import PreparationAnswerBody
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    run_id: str,
    *,
    agent_id: str,
    session_id: str | Unset = '',
    command_id: str,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["agent_id"] = agent_id

    params["session_id"] = session_id

    params["command_id"] = command_id


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/preparation".format(run_id=quote(str(run_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> PreparationAnswerBody | Problem | None:
    if response.status_code == 200:
        response_200 = PreparationAnswerBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[PreparationAnswerBody | Problem]:
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
    agent_id: str,
    session_id: str | Unset = '',
    command_id: str,

) -> Response[PreparationAnswerBody | Problem]:
    """ Find a preparation

     The operation's published preparation, or `found` false while none is published
    (ordinary absence: it does not mean the uploader stopped). Reads only; another
    operation for the run ID is `seed_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        agent_id (str): The operation's agent.
        session_id (str | Unset): The operation's session; "" if none. Default: ''.
        command_id (str): The original command.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PreparationAnswerBody | Problem]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
agent_id=agent_id,
session_id=session_id,
command_id=command_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    run_id: str,
    *,
    client: AuthenticatedClient,
    agent_id: str,
    session_id: str | Unset = '',
    command_id: str,

) -> PreparationAnswerBody | Problem | None:
    """ Find a preparation

     The operation's published preparation, or `found` false while none is published
    (ordinary absence: it does not mean the uploader stopped). Reads only; another
    operation for the run ID is `seed_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        agent_id (str): The operation's agent.
        session_id (str | Unset): The operation's session; "" if none. Default: ''.
        command_id (str): The original command.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PreparationAnswerBody | Problem
     """


    return sync_detailed(
        run_id=run_id,
client=client,
agent_id=agent_id,
session_id=session_id,
command_id=command_id,

    ).parsed

async def asyncio_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    agent_id: str,
    session_id: str | Unset = '',
    command_id: str,

) -> Response[PreparationAnswerBody | Problem]:
    """ Find a preparation

     The operation's published preparation, or `found` false while none is published
    (ordinary absence: it does not mean the uploader stopped). Reads only; another
    operation for the run ID is `seed_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        agent_id (str): The operation's agent.
        session_id (str | Unset): The operation's session; "" if none. Default: ''.
        command_id (str): The original command.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PreparationAnswerBody | Problem]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
agent_id=agent_id,
session_id=session_id,
command_id=command_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    run_id: str,
    *,
    client: AuthenticatedClient,
    agent_id: str,
    session_id: str | Unset = '',
    command_id: str,

) -> PreparationAnswerBody | Problem | None:
    """ Find a preparation

     The operation's published preparation, or `found` false while none is published
    (ordinary absence: it does not mean the uploader stopped). Reads only; another
    operation for the run ID is `seed_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        agent_id (str): The operation's agent.
        session_id (str | Unset): The operation's session; "" if none. Default: ''.
        command_id (str): The original command.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PreparationAnswerBody | Problem
     """


    return (await asyncio_detailed(
        run_id=run_id,
client=client,
agent_id=agent_id,
session_id=session_id,
command_id=command_id,

    )).parsed
