from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.webhook_event_type import WebhookEventType
from typing import cast
import datetime






T = TypeVar("T", bound="WebhookBody")



@_attrs_define
class WebhookBody:
    """ A webhook subscription (its secret is never shown again).

        Attributes:
            webhook_id (str):
            url (str):
            events (list[WebhookEventType]):
            created_at (datetime.datetime): RFC 3339 time with any offset, read as UTC; written as UTC with exactly three
                fraction digits and `Z`. Digits past the milliseconds must be zeros (a finer part is an error, never truncated).
     """

    webhook_id: str
    url: str
    events: list[WebhookEventType]
    created_at: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        webhook_id = self.webhook_id

        url = self.url

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)



        created_at = self.created_at.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "webhook_id": webhook_id,
            "url": url,
            "events": events,
            "created_at": created_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        webhook_id = d.pop("webhook_id")

        url = d.pop("url")

        events = []
        _events = d.pop("events")
        for events_item_data in (_events):
            events_item = WebhookEventType(events_item_data)



            events.append(events_item)


        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        webhook_body = cls(
            webhook_id=webhook_id,
            url=url,
            events=events,
            created_at=created_at,
        )

        return webhook_body

