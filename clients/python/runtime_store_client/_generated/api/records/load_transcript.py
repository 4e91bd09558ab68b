from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.transcript_check import TranscriptCheck
from ...models.transcript_page_body import TranscriptPageBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    run_id: str,
    *,
    cursor: str | Unset = '',
    limit: int | Unset = 512,
    validate: None | TranscriptCheck | Unset = UNSET,
    thinking: bool | Unset = False,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["cursor"] = cursor

    params["limit"] = limit

    json_validate: None | str | Unset
    if isinstance(validate, Unset):
        json_validate = UNSET
    elif isinstance(validate, TranscriptCheck):
        json_validate = validate.value
    else:
        json_validate = validate
    params["validate"] = json_validate

    params["thinking"] = thinking


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{run_id}/transcript".format(run_id=quote(str(run_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | TranscriptPageBody | None:
    if response.status_code == 200:
        response_200 = TranscriptPageBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | TranscriptPageBody]:
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
    cursor: str | Unset = '',
    limit: int | Unset = 512,
    validate: None | TranscriptCheck | Unset = UNSET,
    thinking: bool | Unset = False,

) -> Response[Problem | TranscriptPageBody]:
    """ Load a run's transcript

     The messages of the `transcript_messages_seeded` and `transcript_messages_appended`
    records among one page of the run's records, in order; follow `next_cursor` for long
    runs. For a run started with a seed (CONTRACT.md 15.6), the first page begins with the
    history the run inherits from its seed (its literal messages and its source run's
    history, with the seed's exclusions); nothing in the page marks those messages (read the
    seed to tell them apart), and later pages hold the run's own messages only. With
    `validate`, the whole history is checked first and a broken rule answers 422
    `invalid_transcript` listing every violation (message index and rule).

    Args:
        run_id (str): The run ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Records scanned for this page (not messages). Default: 512.
        validate (None | TranscriptCheck | Unset): Check the whole transcript: `planner` or
            `bedrock` rules. Reads the run from its start, up to the service's bound (default 10,000
            records or 64 MiB of payloads); a longer run answers 413 `payload_too_large`.
        thinking (bool | Unset): With validate=bedrock: the model runs with thinking enabled.
            Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TranscriptPageBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
cursor=cursor,
limit=limit,
validate=validate,
thinking=thinking,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    run_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    limit: int | Unset = 512,
    validate: None | TranscriptCheck | Unset = UNSET,
    thinking: bool | Unset = False,

) -> Problem | TranscriptPageBody | None:
    """ Load a run's transcript

     The messages of the `transcript_messages_seeded` and `transcript_messages_appended`
    records among one page of the run's records, in order; follow `next_cursor` for long
    runs. For a run started with a seed (CONTRACT.md 15.6), the first page begins with the
    history the run inherits from its seed (its literal messages and its source run's
    history, with the seed's exclusions); nothing in the page marks those messages (read the
    seed to tell them apart), and later pages hold the run's own messages only. With
    `validate`, the whole history is checked first and a broken rule answers 422
    `invalid_transcript` listing every violation (message index and rule).

    Args:
        run_id (str): The run ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Records scanned for this page (not messages). Default: 512.
        validate (None | TranscriptCheck | Unset): Check the whole transcript: `planner` or
            `bedrock` rules. Reads the run from its start, up to the service's bound (default 10,000
            records or 64 MiB of payloads); a longer run answers 413 `payload_too_large`.
        thinking (bool | Unset): With validate=bedrock: the model runs with thinking enabled.
            Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TranscriptPageBody
     """


    return sync_detailed(
        run_id=run_id,
client=client,
cursor=cursor,
limit=limit,
validate=validate,
thinking=thinking,

    ).parsed

async def asyncio_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    limit: int | Unset = 512,
    validate: None | TranscriptCheck | Unset = UNSET,
    thinking: bool | Unset = False,

) -> Response[Problem | TranscriptPageBody]:
    """ Load a run's transcript

     The messages of the `transcript_messages_seeded` and `transcript_messages_appended`
    records among one page of the run's records, in order; follow `next_cursor` for long
    runs. For a run started with a seed (CONTRACT.md 15.6), the first page begins with the
    history the run inherits from its seed (its literal messages and its source run's
    history, with the seed's exclusions); nothing in the page marks those messages (read the
    seed to tell them apart), and later pages hold the run's own messages only. With
    `validate`, the whole history is checked first and a broken rule answers 422
    `invalid_transcript` listing every violation (message index and rule).

    Args:
        run_id (str): The run ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Records scanned for this page (not messages). Default: 512.
        validate (None | TranscriptCheck | Unset): Check the whole transcript: `planner` or
            `bedrock` rules. Reads the run from its start, up to the service's bound (default 10,000
            records or 64 MiB of payloads); a longer run answers 413 `payload_too_large`.
        thinking (bool | Unset): With validate=bedrock: the model runs with thinking enabled.
            Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TranscriptPageBody]
     """


    kwargs = _get_kwargs(
        run_id=run_id,
cursor=cursor,
limit=limit,
validate=validate,
thinking=thinking,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    run_id: str,
    *,
    client: AuthenticatedClient,
    cursor: str | Unset = '',
    limit: int | Unset = 512,
    validate: None | TranscriptCheck | Unset = UNSET,
    thinking: bool | Unset = False,

) -> Problem | TranscriptPageBody | None:
    """ Load a run's transcript

     The messages of the `transcript_messages_seeded` and `transcript_messages_appended`
    records among one page of the run's records, in order; follow `next_cursor` for long
    runs. For a run started with a seed (CONTRACT.md 15.6), the first page begins with the
    history the run inherits from its seed (its literal messages and its source run's
    history, with the seed's exclusions); nothing in the page marks those messages (read the
    seed to tell them apart), and later pages hold the run's own messages only. With
    `validate`, the whole history is checked first and a broken rule answers 422
    `invalid_transcript` listing every violation (message index and rule).

    Args:
        run_id (str): The run ID.
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Records scanned for this page (not messages). Default: 512.
        validate (None | TranscriptCheck | Unset): Check the whole transcript: `planner` or
            `bedrock` rules. Reads the run from its start, up to the service's bound (default 10,000
            records or 64 MiB of payloads); a longer run answers 413 `payload_too_large`.
        thinking (bool | Unset): With validate=bedrock: the model runs with thinking enabled.
            Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TranscriptPageBody
     """


    return (await asyncio_detailed(
        run_id=run_id,
client=client,
cursor=cursor,
limit=limit,
validate=validate,
thinking=thinking,

    )).parsed
