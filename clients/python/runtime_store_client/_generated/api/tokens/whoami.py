from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.whoami_body import WhoamiBody
from typing import cast



def _get_kwargs(
    
) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/whoami",
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | WhoamiBody | None:
    if response.status_code == 200:
        response_200 = WhoamiBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | WhoamiBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,

) -> Response[Problem | WhoamiBody]:
    """ Who the caller's token is

     The caller's token name, role and permissions. With tokens required (a token key is
    configured), a missing, unknown or revoked token is refused with `unauthenticated`
    (401) like any other call; every role may ask. In open mode the answer is
    `{"mode": "open", "name": "", "role": "admin"}`: anyone may do anything.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WhoamiBody]
     """


    kwargs = _get_kwargs(
        
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,

) -> Problem | WhoamiBody | None:
    """ Who the caller's token is

     The caller's token name, role and permissions. With tokens required (a token key is
    configured), a missing, unknown or revoked token is refused with `unauthenticated`
    (401) like any other call; every role may ask. In open mode the answer is
    `{"mode": "open", "name": "", "role": "admin"}`: anyone may do anything.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WhoamiBody
     """


    return sync_detailed(
        client=client,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,

) -> Response[Problem | WhoamiBody]:
    """ Who the caller's token is

     The caller's token name, role and permissions. With tokens required (a token key is
    configured), a missing, unknown or revoked token is refused with `unauthenticated`
    (401) like any other call; every role may ask. In open mode the answer is
    `{"mode": "open", "name": "", "role": "admin"}`: anyone may do anything.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WhoamiBody]
     """


    kwargs = _get_kwargs(
        
    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,

) -> Problem | WhoamiBody | None:
    """ Who the caller's token is

     The caller's token name, role and permissions. With tokens required (a token key is
    configured), a missing, unknown or revoked token is refused with `unauthenticated`
    (401) like any other call; every role may ask. In open mode the answer is
    `{"mode": "open", "name": "", "role": "admin"}`: anyone may do anything.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WhoamiBody
     """


    return (await asyncio_detailed(
        client=client,

    )).parsed
