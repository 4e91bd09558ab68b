from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.append_records_request import AppendRecordsRequest
from ...models.append_results_body import AppendResultsBody
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    run_id: str,
    *,
    body: AppendRecordsRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/runs/{run_id}/records/batch".format(run_id=quote(str(run_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AppendResultsBody | Problem | None:
    if response.status_code == 200:
        response_200 = AppendResultsBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[AppendResultsBody | Problem]:
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
    body: AppendRecordsRequest,

) -> Response[AppendResultsBody | Problem]:
    """ Append a batch of records

     Append 1 to 1,000 ordinary records of the run in one transaction, in the given
    order, each through the same checks as a single append: an exact retry returns its
    original ID (`inserted = false`), a key repeated inside the batch is a retry of its
    first occurrence when the content is the same, else `event_conflict`. If any record
    fails nothing is written, and the problem names that record in `event_key`.

    Args:
        run_id (str): The run ID.
        body (AppendRecordsRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AppendResultsBody | Problem]
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
    body: AppendRecordsRequest,

) -> AppendResultsBody | Problem | None:
    """ Append a batch of records

     Append 1 to 1,000 ordinary records of the run in one transaction, in the given
    order, each through the same checks as a single append: an exact retry returns its
    original ID (`inserted = false`), a key repeated inside the batch is a retry of its
    first occurrence when the content is the same, else `event_conflict`. If any record
    fails nothing is written, and the problem names that record in `event_key`.

    Args:
        run_id (str): The run ID.
        body (AppendRecordsRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AppendResultsBody | Problem
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
    body: AppendRecordsRequest,

) -> Response[AppendResultsBody | Problem]:
    """ Append a batch of records

     Append 1 to 1,000 ordinary records of the run in one transaction, in the given
    order, each through the same checks as a single append: an exact retry returns its
    original ID (`inserted = false`), a key repeated inside the batch is a retry of its
    first occurrence when the content is the same, else `event_conflict`. If any record
    fails nothing is written, and the problem names that record in `event_key`.

    Args:
        run_id (str): The run ID.
        body (AppendRecordsRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AppendResultsBody | Problem]
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
    body: AppendRecordsRequest,

) -> AppendResultsBody | Problem | None:
    """ Append a batch of records

     Append 1 to 1,000 ordinary records of the run in one transaction, in the given
    order, each through the same checks as a single append: an exact retry returns its
    original ID (`inserted = false`), a key repeated inside the batch is a retry of its
    first occurrence when the content is the same, else `event_conflict`. If any record
    fails nothing is written, and the problem names that record in `event_key`.

    Args:
        run_id (str): The run ID.
        body (AppendRecordsRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AppendResultsBody | Problem
     """


    return (await asyncio_detailed(
        run_id=run_id,
client=client,
body=body,

    )).parsed
