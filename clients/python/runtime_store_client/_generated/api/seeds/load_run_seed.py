from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.run_seed_body import RunSeedBody
from typing import cast



def _get_kwargs(
    run_id: str,
    *,
    seed_end_id: str,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["seed_end_id"] = seed_end_id


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/seed".format(run_id=quote(str(run_id), safe=""),),
        "params": params,
    }


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
    seed_end_id: str,

) -> Response[Problem | RunSeedBody]:
    """ Load a published seed

     The run ID's published seed: its declaration, source and history end. No
    declaration is `seed_not_found`, none published `seed_not_published`, a `seed_end_id`
    that is not the published history end `seed_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        seed_end_id (str): The published history end (a run's `seed_end_id`); required.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunSeedBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
seed_end_id=seed_end_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    run_id: str,
    *,
    client: AuthenticatedClient,
    seed_end_id: str,

) -> Problem | RunSeedBody | None:
    """ Load a published seed

     The run ID's published seed: its declaration, source and history end. No
    declaration is `seed_not_found`, none published `seed_not_published`, a `seed_end_id`
    that is not the published history end `seed_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        seed_end_id (str): The published history end (a run's `seed_end_id`); required.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunSeedBody
     """


    return sync_detailed(
        run_id=run_id,
client=client,
seed_end_id=seed_end_id,

    ).parsed

async def asyncio_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    seed_end_id: str,

) -> Response[Problem | RunSeedBody]:
    """ Load a published seed

     The run ID's published seed: its declaration, source and history end. No
    declaration is `seed_not_found`, none published `seed_not_published`, a `seed_end_id`
    that is not the published history end `seed_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        seed_end_id (str): The published history end (a run's `seed_end_id`); required.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunSeedBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
seed_end_id=seed_end_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    run_id: str,
    *,
    client: AuthenticatedClient,
    seed_end_id: str,

) -> Problem | RunSeedBody | None:
    """ Load a published seed

     The run ID's published seed: its declaration, source and history end. No
    declaration is `seed_not_found`, none published `seed_not_published`, a `seed_end_id`
    that is not the published history end `seed_conflict`.

    Args:
        run_id (str): The run ID the seed prepares.
        seed_end_id (str): The published history end (a run's `seed_end_id`); required.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunSeedBody
     """


    return (await asyncio_detailed(
        run_id=run_id,
client=client,
seed_end_id=seed_end_id,

    )).parsed
