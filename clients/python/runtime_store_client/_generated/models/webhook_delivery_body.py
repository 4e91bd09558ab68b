from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.delivery_status import DeliveryStatus
from ..models.webhook_event_type import WebhookEventType
from typing import cast
import datetime






T = TypeVar("T", bound="WebhookDeliveryBody")



@_attrs_define
class WebhookDeliveryBody:
    """ One event's delivery to one subscription.

        Attributes:
            event_id (str):
            type_ (WebhookEventType): What a webhook subscription may ask for (13.1).
            status (DeliveryStatus): Where one event's delivery to one subscription stands (13.3).
            attempts (int):
            last_status_code (int | None): The last attempt's HTTP status, if any.
            next_attempt_at (datetime.datetime | None): When the next attempt is due; null once delivered or failed.
     """

    event_id: str
    type_: WebhookEventType
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None
    next_attempt_at: datetime.datetime | None





    def to_dict(self) -> dict[str, Any]:
        event_id = self.event_id

        type_ = self.type_.value

        status = self.status.value

        attempts = self.attempts

        last_status_code: int | None
        last_status_code = self.last_status_code

        next_attempt_at: None | str
        if isinstance(self.next_attempt_at, datetime.datetime):
            next_attempt_at = self.next_attempt_at.isoformat()
        else:
            next_attempt_at = self.next_attempt_at


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "event_id": event_id,
            "type": type_,
            "status": status,
            "attempts": attempts,
            "last_status_code": last_status_code,
            "next_attempt_at": next_attempt_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        event_id = d.pop("event_id")

        type_ = WebhookEventType(d.pop("type"))




        status = DeliveryStatus(d.pop("status"))




        attempts = d.pop("attempts")

        def _parse_last_status_code(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        last_status_code = _parse_last_status_code(d.pop("last_status_code"))


        def _parse_next_attempt_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_attempt_at_type_0 = datetime.datetime.fromisoformat(data)



                return next_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at"))


        webhook_delivery_body = cls(
            event_id=event_id,
            type_=type_,
            status=status,
            attempts=attempts,
            last_status_code=last_status_code,
            next_attempt_at=next_attempt_at,
        )

        return webhook_delivery_body

