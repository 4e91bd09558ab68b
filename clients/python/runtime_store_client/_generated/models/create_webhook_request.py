from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.webhook_event_type import WebhookEventType
from typing import cast






T = TypeVar("T", bound="CreateWebhookRequest")



@_attrs_define
class CreateWebhookRequest:
    """ 
        Attributes:
            url (str): Where events are POSTed: http or https; hosts resolving to internal addresses are refused unless
                allowed by RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS.
            events (list[WebhookEventType]): The event types this subscription receives.
     """

    url: str
    events: list[WebhookEventType]





    def to_dict(self) -> dict[str, Any]:
        url = self.url

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "url": url,
            "events": events,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        url = d.pop("url")

        events = []
        _events = d.pop("events")
        for events_item_data in (_events):
            events_item = WebhookEventType(events_item_data)



            events.append(events_item)


        create_webhook_request = cls(
            url=url,
            events=events,
        )

        return create_webhook_request

