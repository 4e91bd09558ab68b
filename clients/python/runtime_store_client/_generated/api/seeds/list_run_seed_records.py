from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.seed_page_body import SeedPageBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    run_id: str,
    *,
    seed_end_id: str | Unset = '',
    after: str | Unset = '',
    limit: int | Unset = 100,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["seed_end_id"] = seed_end_id

    params["after"] = after

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/seed/records".format(run_id=quote(str(run_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SeedPageBody | None:
    if response.status_code == 200:
        response_200 = SeedPageBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | SeedPageBody]:
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
    seed_end_id: str | Unset = '',
    after: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[Problem | SeedPageBody]:
    """ List a published seed's history records

     The published history records (`"1"` through the history end, never a `prepared`
    one) after `after`, in position order, each with its exact bytes. A published chain
    never changes: the same arguments give the same page.

    Args:
        run_id (str): The run ID the seed prepares.
        seed_end_id (str | Unset): The published history end; required (left out:
            `invalid_argument`, after the check of `limit`, which comes first). Default: ''.
        after (str | Unset): "" to read from the start, or the ID of a record of the listed range
            (the previous page's `next_cursor`). Default: ''.
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SeedPageBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
seed_end_id=seed_end_id,
after=after,
limit=limit,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    run_id: str,
    *,
    client: AuthenticatedClient,
    seed_end_id: str | Unset = '',
    after: str | Unset = '',
    limit: int | Unset = 100,

) -> Problem | SeedPageBody | None:
    """ List a published seed's history records

     The published history records (`"1"` through the history end, never a `prepared`
    one) after `after`, in position order, each with its exact bytes. A published chain
    never changes: the same arguments give the same page.

    Args:
        run_id (str): The run ID the seed prepares.
        seed_end_id (str | Unset): The published history end; required (left out:
            `invalid_argument`, after the check of `limit`, which comes first). Default: ''.
        after (str | Unset): "" to read from the start, or the ID of a record of the listed range
            (the previous page's `next_cursor`). Default: ''.
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SeedPageBody
     """


    return sync_detailed(
        run_id=run_id,
client=client,
seed_end_id=seed_end_id,
after=after,
limit=limit,

    ).parsed

async def asyncio_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    seed_end_id: str | Unset = '',
    after: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[Problem | SeedPageBody]:
    """ List a published seed's history records

     The published history records (`"1"` through the history end, never a `prepared`
    one) after `after`, in position order, each with its exact bytes. A published chain
    never changes: the same arguments give the same page.

    Args:
        run_id (str): The run ID the seed prepares.
        seed_end_id (str | Unset): The published history end; required (left out:
            `invalid_argument`, after the check of `limit`, which comes first). Default: ''.
        after (str | Unset): "" to read from the start, or the ID of a record of the listed range
            (the previous page's `next_cursor`). Default: ''.
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SeedPageBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
seed_end_id=seed_end_id,
after=after,
limit=limit,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    run_id: str,
    *,
    client: AuthenticatedClient,
    seed_end_id: str | Unset = '',
    after: str | Unset = '',
    limit: int | Unset = 100,

) -> Problem | SeedPageBody | None:
    """ List a published seed's history records

     The published history records (`"1"` through the history end, never a `prepared`
    one) after `after`, in position order, each with its exact bytes. A published chain
    never changes: the same arguments give the same page.

    Args:
        run_id (str): The run ID the seed prepares.
        seed_end_id (str | Unset): The published history end; required (left out:
            `invalid_argument`, after the check of `limit`, which comes first). Default: ''.
        after (str | Unset): "" to read from the start, or the ID of a record of the listed range
            (the previous page's `next_cursor`). Default: ''.
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SeedPageBody
     """


    return (await asyncio_detailed(
        run_id=run_id,
client=client,
seed_end_id=seed_end_id,
after=after,
limit=limit,

    )).parsed
