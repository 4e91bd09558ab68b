from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.webhook_delivery_body import WebhookDeliveryBody
from typing import cast



def _get_kwargs(
    webhook_id: str,
    event_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks/{webhook_id}/deliveries/{event_id}/retry".format(webhook_id=quote(str(webhook_id), safe=""),event_id=quote(str(event_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | WebhookDeliveryBody | None:
    if response.status_code == 200:
        response_200 = WebhookDeliveryBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | WebhookDeliveryBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    webhook_id: str,
    event_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | WebhookDeliveryBody]:
    """ Queue a failed delivery again

     A failed delivery becomes pending again with a new retry window; a pending or
    delivered one is answered as it is.

    Args:
        webhook_id (str): The subscription's ID.
        event_id (str): The event's ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookDeliveryBody]
     """


    kwargs = _get_kwargs(
        webhook_id=webhook_id,
event_id=event_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    webhook_id: str,
    event_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | WebhookDeliveryBody | None:
    """ Queue a failed delivery again

     A failed delivery becomes pending again with a new retry window; a pending or
    delivered one is answered as it is.

    Args:
        webhook_id (str): The subscription's ID.
        event_id (str): The event's ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookDeliveryBody
     """


    return sync_detailed(
        webhook_id=webhook_id,
event_id=event_id,
client=client,

    ).parsed

async def asyncio_detailed(
    webhook_id: str,
    event_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | WebhookDeliveryBody]:
    """ Queue a failed delivery again

     A failed delivery becomes pending again with a new retry window; a pending or
    delivered one is answered as it is.

    Args:
        webhook_id (str): The subscription's ID.
        event_id (str): The event's ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookDeliveryBody]
     """


    kwargs = _get_kwargs(
        webhook_id=webhook_id,
event_id=event_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    webhook_id: str,
    event_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | WebhookDeliveryBody | None:
    """ Queue a failed delivery again

     A failed delivery becomes pending again with a new retry window; a pending or
    delivered one is answered as it is.

    Args:
        webhook_id (str): The subscription's ID.
        event_id (str): The event's ID.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookDeliveryBody
     """


    return (await asyncio_detailed(
        webhook_id=webhook_id,
event_id=event_id,
client=client,

    )).parsed
