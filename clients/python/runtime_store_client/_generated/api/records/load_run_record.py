from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.record_body import RecordBody
from typing import cast



def _get_kwargs(
    run_id: str,
    *,
    event_key: str,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["event_key"] = event_key


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/record".format(run_id=quote(str(run_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RecordBody | None:
    if response.status_code == 200:
        response_200 = RecordBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RecordBody]:
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
    event_key: str,

) -> Response[Problem | RecordBody]:
    """ Load a record by its event key

     The record stored under `event_key` in the run, as a page carries it (with its
    `id`); 404 `record_not_found` when the run holds none under that key.

    Args:
        run_id (str): The run ID.
        event_key (str): The record's event key.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RecordBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
event_key=event_key,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    run_id: str,
    *,
    client: AuthenticatedClient,
    event_key: str,

) -> Problem | RecordBody | None:
    """ Load a record by its event key

     The record stored under `event_key` in the run, as a page carries it (with its
    `id`); 404 `record_not_found` when the run holds none under that key.

    Args:
        run_id (str): The run ID.
        event_key (str): The record's event key.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RecordBody
     """


    return sync_detailed(
        run_id=run_id,
client=client,
event_key=event_key,

    ).parsed

async def asyncio_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    event_key: str,

) -> Response[Problem | RecordBody]:
    """ Load a record by its event key

     The record stored under `event_key` in the run, as a page carries it (with its
    `id`); 404 `record_not_found` when the run holds none under that key.

    Args:
        run_id (str): The run ID.
        event_key (str): The record's event key.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RecordBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
event_key=event_key,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    run_id: str,
    *,
    client: AuthenticatedClient,
    event_key: str,

) -> Problem | RecordBody | None:
    """ Load a record by its event key

     The record stored under `event_key` in the run, as a page carries it (with its
    `id`); 404 `record_not_found` when the run holds none under that key.

    Args:
        run_id (str): The run ID.
        event_key (str): The record's event key.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RecordBody
     """


    return (await asyncio_detailed(
        run_id=run_id,
client=client,
event_key=event_key,

    )).parsed
