from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.webhook_delivery_body import WebhookDeliveryBody





T = TypeVar("T", bound="DeliveryPageBody")



@_attrs_define
class DeliveryPageBody:
    """ 
        Attributes:
            deliveries (list[WebhookDeliveryBody]):
            next_cursor (str):
     """

    deliveries: list[WebhookDeliveryBody]
    next_cursor: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.webhook_delivery_body import WebhookDeliveryBody # noqa: PLC0415
        deliveries = []
        for deliveries_item_data in self.deliveries:
            deliveries_item = deliveries_item_data.to_dict()
            deliveries.append(deliveries_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "deliveries": deliveries,
            "next_cursor": next_cursor,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.webhook_delivery_body import WebhookDeliveryBody # noqa: PLC0415
        d = dict(src_dict)
        deliveries = []
        _deliveries = d.pop("deliveries")
        for deliveries_item_data in (_deliveries):
            deliveries_item = WebhookDeliveryBody.from_dict(deliveries_item_data)



            deliveries.append(deliveries_item)


        next_cursor = d.pop("next_cursor")

        delivery_page_body = cls(
            deliveries=deliveries,
            next_cursor=next_cursor,
        )

        return delivery_page_body

