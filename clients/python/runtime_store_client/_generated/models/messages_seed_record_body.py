from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="MessagesSeedRecordBody")



@_attrs_define
class MessagesSeedRecordBody:
    """ A stored record of literal messages.

        Attributes:
            id (str): A record ID: a decimal position of the attempt.
            key (str):
            previous_id (str):
            messages (str): The exact JSON text of a message array.
     """

    id: str
    key: str
    previous_id: str
    messages: str





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        key = self.key

        previous_id = self.previous_id

        messages = self.messages


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "key": key,
            "previous_id": previous_id,
            "messages": messages,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        key = d.pop("key")

        previous_id = d.pop("previous_id")

        messages = d.pop("messages")

        messages_seed_record_body = cls(
            id=id,
            key=key,
            previous_id=previous_id,
            messages=messages,
        )

        return messages_seed_record_body

