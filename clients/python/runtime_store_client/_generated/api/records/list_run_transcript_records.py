from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.record_page_body import RecordPageBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    run_id: str,
    *,
    through: str,
    after: str | Unset = '',
    limit: int | Unset = 100,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["through"] = through

    params["after"] = after

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/transcript-records".format(run_id=quote(str(run_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RecordPageBody | None:
    if response.status_code == 200:
        response_200 = RecordPageBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RecordPageBody]:
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
    through: str,
    after: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[Problem | RecordPageBody]:
    """ Read a prefix of a run's transcript records

     The run's `transcript_messages_seeded` and `transcript_messages_appended` records
    after `after` and up to and including `through`, in record order. `next_cursor` is the
    ID of the page's last record when more transcript records follow up to `through`, else
    "". The same `through`, `after` and `limit` always give the same page. A position that
    is not one of the run's is 422 `invalid_transcript_position`; a single transcript record
    over 1 MiB is 413 `payload_too_large`.

    Args:
        run_id (str): The run ID.
        through (str): The ID of a committed record of the run, of any type: the page reads up to
            and including it, so records appended later never change it.
        after (str | Unset): "" to read from the start, or the ID of a transcript record of the
            run at or before `through` (the previous page's `next_cursor`). Default: ''.
        limit (int | Unset): Records per page, at least 1; above 512 it is served as 512. A page
            also ends before the record that would pass 1 MiB of payloads. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RecordPageBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
through=through,
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
    through: str,
    after: str | Unset = '',
    limit: int | Unset = 100,

) -> Problem | RecordPageBody | None:
    """ Read a prefix of a run's transcript records

     The run's `transcript_messages_seeded` and `transcript_messages_appended` records
    after `after` and up to and including `through`, in record order. `next_cursor` is the
    ID of the page's last record when more transcript records follow up to `through`, else
    "". The same `through`, `after` and `limit` always give the same page. A position that
    is not one of the run's is 422 `invalid_transcript_position`; a single transcript record
    over 1 MiB is 413 `payload_too_large`.

    Args:
        run_id (str): The run ID.
        through (str): The ID of a committed record of the run, of any type: the page reads up to
            and including it, so records appended later never change it.
        after (str | Unset): "" to read from the start, or the ID of a transcript record of the
            run at or before `through` (the previous page's `next_cursor`). Default: ''.
        limit (int | Unset): Records per page, at least 1; above 512 it is served as 512. A page
            also ends before the record that would pass 1 MiB of payloads. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RecordPageBody
     """


    return sync_detailed(
        run_id=run_id,
client=client,
through=through,
after=after,
limit=limit,

    ).parsed

async def asyncio_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    through: str,
    after: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[Problem | RecordPageBody]:
    """ Read a prefix of a run's transcript records

     The run's `transcript_messages_seeded` and `transcript_messages_appended` records
    after `after` and up to and including `through`, in record order. `next_cursor` is the
    ID of the page's last record when more transcript records follow up to `through`, else
    "". The same `through`, `after` and `limit` always give the same page. A position that
    is not one of the run's is 422 `invalid_transcript_position`; a single transcript record
    over 1 MiB is 413 `payload_too_large`.

    Args:
        run_id (str): The run ID.
        through (str): The ID of a committed record of the run, of any type: the page reads up to
            and including it, so records appended later never change it.
        after (str | Unset): "" to read from the start, or the ID of a transcript record of the
            run at or before `through` (the previous page's `next_cursor`). Default: ''.
        limit (int | Unset): Records per page, at least 1; above 512 it is served as 512. A page
            also ends before the record that would pass 1 MiB of payloads. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RecordPageBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
through=through,
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
    through: str,
    after: str | Unset = '',
    limit: int | Unset = 100,

) -> Problem | RecordPageBody | None:
    """ Read a prefix of a run's transcript records

     The run's `transcript_messages_seeded` and `transcript_messages_appended` records
    after `after` and up to and including `through`, in record order. `next_cursor` is the
    ID of the page's last record when more transcript records follow up to `through`, else
    "". The same `through`, `after` and `limit` always give the same page. A position that
    is not one of the run's is 422 `invalid_transcript_position`; a single transcript record
    over 1 MiB is 413 `payload_too_large`.

    Args:
        run_id (str): The run ID.
        through (str): The ID of a committed record of the run, of any type: the page reads up to
            and including it, so records appended later never change it.
        after (str | Unset): "" to read from the start, or the ID of a transcript record of the
            run at or before `through` (the previous page's `next_cursor`). Default: ''.
        limit (int | Unset): Records per page, at least 1; above 512 it is served as 512. A page
            also ends before the record that would pass 1 MiB of payloads. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RecordPageBody
     """


    return (await asyncio_detailed(
        run_id=run_id,
client=client,
through=through,
after=after,
limit=limit,

    )).parsed
