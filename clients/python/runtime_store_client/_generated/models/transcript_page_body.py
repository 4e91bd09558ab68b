from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.message_body import MessageBody





T = TypeVar("T", bound="TranscriptPageBody")



@_attrs_define
class TranscriptPageBody:
    """ The messages of the transcript records in one page of the run's records.

        Attributes:
            messages (list[MessageBody]):
            next_cursor (str): The record cursor to read on from; "" when no more records existed.
     """

    messages: list[MessageBody]
    next_cursor: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.message_body import MessageBody # noqa: PLC0415
        messages = []
        for messages_item_data in self.messages:
            messages_item = messages_item_data.to_dict()
            messages.append(messages_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "messages": messages,
            "next_cursor": next_cursor,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.message_body import MessageBody # noqa: PLC0415
        d = dict(src_dict)
        messages = []
        _messages = d.pop("messages")
        for messages_item_data in (_messages):
            messages_item = MessageBody.from_dict(messages_item_data)



            messages.append(messages_item)


        next_cursor = d.pop("next_cursor")

        transcript_page_body = cls(
            messages=messages,
            next_cursor=next_cursor,
        )

        return transcript_page_body

