from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.webhook_body import WebhookBody





T = TypeVar("T", bound="WebhookListBody")



@_attrs_define
class WebhookListBody:
    """ 
        Attributes:
            webhooks (list[WebhookBody]):
     """

    webhooks: list[WebhookBody]





    def to_dict(self) -> dict[str, Any]:
        from ..models.webhook_body import WebhookBody # noqa: PLC0415
        webhooks = []
        for webhooks_item_data in self.webhooks:
            webhooks_item = webhooks_item_data.to_dict()
            webhooks.append(webhooks_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "webhooks": webhooks,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.webhook_body import WebhookBody # noqa: PLC0415
        d = dict(src_dict)
        webhooks = []
        _webhooks = d.pop("webhooks")
        for webhooks_item_data in (_webhooks):
            webhooks_item = WebhookBody.from_dict(webhooks_item_data)



            webhooks.append(webhooks_item)


        webhook_list_body = cls(
            webhooks=webhooks,
        )

        return webhook_list_body

