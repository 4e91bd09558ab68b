from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.delivery_page_body import DeliveryPageBody
from ...models.delivery_status import DeliveryStatus
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    webhook_id: str,
    *,
    status: list[DeliveryStatus] | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_status: list[str] | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = []
        for status_item_data in status:
            status_item = status_item_data.value
            json_status.append(status_item)


    params["status"] = json_status

    params["cursor"] = cursor

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/webhooks/{webhook_id}/deliveries".format(webhook_id=quote(str(webhook_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DeliveryPageBody | Problem | None:
    if response.status_code == 200:
        response_200 = DeliveryPageBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DeliveryPageBody | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    status: list[DeliveryStatus] | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[DeliveryPageBody | Problem]:
    """ List a subscription's deliveries

     The subscription's deliveries in the order their events committed.

    Args:
        webhook_id (str): The subscription's ID.
        status (list[DeliveryStatus] | Unset): Only deliveries in these statuses (repeatable).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliveryPageBody | Problem]
     """


    kwargs = _get_kwargs(
        webhook_id=webhook_id,
status=status,
cursor=cursor,
limit=limit,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    status: list[DeliveryStatus] | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> DeliveryPageBody | Problem | None:
    """ List a subscription's deliveries

     The subscription's deliveries in the order their events committed.

    Args:
        webhook_id (str): The subscription's ID.
        status (list[DeliveryStatus] | Unset): Only deliveries in these statuses (repeatable).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliveryPageBody | Problem
     """


    return sync_detailed(
        webhook_id=webhook_id,
client=client,
status=status,
cursor=cursor,
limit=limit,

    ).parsed

async def asyncio_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    status: list[DeliveryStatus] | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> Response[DeliveryPageBody | Problem]:
    """ List a subscription's deliveries

     The subscription's deliveries in the order their events committed.

    Args:
        webhook_id (str): The subscription's ID.
        status (list[DeliveryStatus] | Unset): Only deliveries in these statuses (repeatable).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliveryPageBody | Problem]
     """


    kwargs = _get_kwargs(
        webhook_id=webhook_id,
status=status,
cursor=cursor,
limit=limit,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    status: list[DeliveryStatus] | Unset = UNSET,
    cursor: str | Unset = '',
    limit: int | Unset = 100,

) -> DeliveryPageBody | Problem | None:
    """ List a subscription's deliveries

     The subscription's deliveries in the order their events committed.

    Args:
        webhook_id (str): The subscription's ID.
        status (list[DeliveryStatus] | Unset): Only deliveries in these statuses (repeatable).
        cursor (str | Unset): Opaque cursor from the previous page's next_cursor; "" reads from
            the start. Default: ''.
        limit (int | Unset): Page size; above the service maximum (default 1000) it is served as
            the maximum. Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliveryPageBody | Problem
     """


    return (await asyncio_detailed(
        webhook_id=webhook_id,
client=client,
status=status,
cursor=cursor,
limit=limit,

    )).parsed
