from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.run_meta_body import RunMetaBody
from ...models.wait_until import WaitUntil
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    run_id: str,
    *,
    until: WaitUntil | Unset = UNSET,
    timeout: float | Unset = 30.0,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_until: str | Unset = UNSET
    if not isinstance(until, Unset):
        json_until = until.value

    params["until"] = json_until

    params["timeout"] = timeout


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/wait".format(run_id=quote(str(run_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RunMetaBody | None:
    if response.status_code == 200:
        response_200 = RunMetaBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RunMetaBody]:
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
    until: WaitUntil | Unset = UNSET,
    timeout: float | Unset = 30.0,

) -> Response[Problem | RunMetaBody]:
    """ Wait until a run finishes

     The run's meta as soon as it reaches `until` (at once if it already has); at the
    timeout its current meta with `Run-Wait: timeout`. Clients wait again after a timeout.

    Args:
        run_id (str): The run ID.
        until (WaitUntil | Unset): What ``wait_for_run`` waits for (13.4): ``finished``
            (completed, failed, canceled),
            or ``stopped`` (those or suspended).
        timeout (float | Unset): Seconds to wait, at most 60. Default: 30.0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunMetaBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
until=until,
timeout=timeout,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    run_id: str,
    *,
    client: AuthenticatedClient,
    until: WaitUntil | Unset = UNSET,
    timeout: float | Unset = 30.0,

) -> Problem | RunMetaBody | None:
    """ Wait until a run finishes

     The run's meta as soon as it reaches `until` (at once if it already has); at the
    timeout its current meta with `Run-Wait: timeout`. Clients wait again after a timeout.

    Args:
        run_id (str): The run ID.
        until (WaitUntil | Unset): What ``wait_for_run`` waits for (13.4): ``finished``
            (completed, failed, canceled),
            or ``stopped`` (those or suspended).
        timeout (float | Unset): Seconds to wait, at most 60. Default: 30.0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunMetaBody
     """


    return sync_detailed(
        run_id=run_id,
client=client,
until=until,
timeout=timeout,

    ).parsed

async def asyncio_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    until: WaitUntil | Unset = UNSET,
    timeout: float | Unset = 30.0,

) -> Response[Problem | RunMetaBody]:
    """ Wait until a run finishes

     The run's meta as soon as it reaches `until` (at once if it already has); at the
    timeout its current meta with `Run-Wait: timeout`. Clients wait again after a timeout.

    Args:
        run_id (str): The run ID.
        until (WaitUntil | Unset): What ``wait_for_run`` waits for (13.4): ``finished``
            (completed, failed, canceled),
            or ``stopped`` (those or suspended).
        timeout (float | Unset): Seconds to wait, at most 60. Default: 30.0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunMetaBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
until=until,
timeout=timeout,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    run_id: str,
    *,
    client: AuthenticatedClient,
    until: WaitUntil | Unset = UNSET,
    timeout: float | Unset = 30.0,

) -> Problem | RunMetaBody | None:
    """ Wait until a run finishes

     The run's meta as soon as it reaches `until` (at once if it already has); at the
    timeout its current meta with `Run-Wait: timeout`. Clients wait again after a timeout.

    Args:
        run_id (str): The run ID.
        until (WaitUntil | Unset): What ``wait_for_run`` waits for (13.4): ``finished``
            (completed, failed, canceled),
            or ``stopped`` (those or suspended).
        timeout (float | Unset): Seconds to wait, at most 60. Default: 30.0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunMetaBody
     """


    return (await asyncio_detailed(
        run_id=run_id,
client=client,
until=until,
timeout=timeout,

    )).parsed
