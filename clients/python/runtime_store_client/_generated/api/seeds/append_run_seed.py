from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.append_run_seed_request import AppendRunSeedRequest
from ...models.problem import Problem
from ...models.seed_append_result_body import SeedAppendResultBody
from typing import cast



def _get_kwargs(
    run_id: str,
    attempt_id: str,
    *,
    body: AppendRunSeedRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/runs/{run_id}/seed/attempts/{attempt_id}/records".format(run_id=quote(str(run_id), safe=""),attempt_id=quote(str(attempt_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SeedAppendResultBody | None:
    if response.status_code == 200:
        response_200 = SeedAppendResultBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | SeedAppendResultBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    run_id: str,
    attempt_id: str,
    *,
    client: AuthenticatedClient,
    body: AppendRunSeedRequest,

) -> Response[Problem | SeedAppendResultBody]:
    """ Append a seed record

     Append one record right after its exact predecessor (`previous_id`: the attempt's
    last record, "0" for the first): literal `messages` (a string holding the exact JSON
    text of a message array), a `literal_part` of a literal spanning several records, the
    source's `prefix`, or a `prepared` fragment of the compiled start (history first, the
    compiled start last). Byte values are standard base64 with padding.

    The same `key` with the same content is an exact retry (`inserted` false, its original
    ID); changed content, a stale `previous_id`, an append after publication or out of the
    order above is `seed_conflict`. The canonical command may hold at most 1,000,000 bytes.

    Args:
        run_id (str): The run ID the seed prepares.
        attempt_id (str): The attempt ID, chosen by the caller.
        body (AppendRunSeedRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SeedAppendResultBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
attempt_id=attempt_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    run_id: str,
    attempt_id: str,
    *,
    client: AuthenticatedClient,
    body: AppendRunSeedRequest,

) -> Problem | SeedAppendResultBody | None:
    """ Append a seed record

     Append one record right after its exact predecessor (`previous_id`: the attempt's
    last record, "0" for the first): literal `messages` (a string holding the exact JSON
    text of a message array), a `literal_part` of a literal spanning several records, the
    source's `prefix`, or a `prepared` fragment of the compiled start (history first, the
    compiled start last). Byte values are standard base64 with padding.

    The same `key` with the same content is an exact retry (`inserted` false, its original
    ID); changed content, a stale `previous_id`, an append after publication or out of the
    order above is `seed_conflict`. The canonical command may hold at most 1,000,000 bytes.

    Args:
        run_id (str): The run ID the seed prepares.
        attempt_id (str): The attempt ID, chosen by the caller.
        body (AppendRunSeedRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SeedAppendResultBody
     """


    return sync_detailed(
        run_id=run_id,
attempt_id=attempt_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    run_id: str,
    attempt_id: str,
    *,
    client: AuthenticatedClient,
    body: AppendRunSeedRequest,

) -> Response[Problem | SeedAppendResultBody]:
    """ Append a seed record

     Append one record right after its exact predecessor (`previous_id`: the attempt's
    last record, "0" for the first): literal `messages` (a string holding the exact JSON
    text of a message array), a `literal_part` of a literal spanning several records, the
    source's `prefix`, or a `prepared` fragment of the compiled start (history first, the
    compiled start last). Byte values are standard base64 with padding.

    The same `key` with the same content is an exact retry (`inserted` false, its original
    ID); changed content, a stale `previous_id`, an append after publication or out of the
    order above is `seed_conflict`. The canonical command may hold at most 1,000,000 bytes.

    Args:
        run_id (str): The run ID the seed prepares.
        attempt_id (str): The attempt ID, chosen by the caller.
        body (AppendRunSeedRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SeedAppendResultBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
attempt_id=attempt_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    run_id: str,
    attempt_id: str,
    *,
    client: AuthenticatedClient,
    body: AppendRunSeedRequest,

) -> Problem | SeedAppendResultBody | None:
    """ Append a seed record

     Append one record right after its exact predecessor (`previous_id`: the attempt's
    last record, "0" for the first): literal `messages` (a string holding the exact JSON
    text of a message array), a `literal_part` of a literal spanning several records, the
    source's `prefix`, or a `prepared` fragment of the compiled start (history first, the
    compiled start last). Byte values are standard base64 with padding.

    The same `key` with the same content is an exact retry (`inserted` false, its original
    ID); changed content, a stale `previous_id`, an append after publication or out of the
    order above is `seed_conflict`. The canonical command may hold at most 1,000,000 bytes.

    Args:
        run_id (str): The run ID the seed prepares.
        attempt_id (str): The attempt ID, chosen by the caller.
        body (AppendRunSeedRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SeedAppendResultBody
     """


    return (await asyncio_detailed(
        run_id=run_id,
attempt_id=attempt_id,
client=client,
body=body,

    )).parsed
