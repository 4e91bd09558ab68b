from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.role import Role
from typing import cast

if TYPE_CHECKING:
  from ..models.cache_checkpoint_part_body import CacheCheckpointPartBody
  from ..models.citations_part_body import CitationsPartBody
  from ..models.document_part_body import DocumentPartBody
  from ..models.image_part_body import ImagePartBody
  from ..models.message_body_meta_type_0 import MessageBodyMetaType0
  from ..models.text_part_body import TextPartBody
  from ..models.thinking_part_body import ThinkingPartBody
  from ..models.tool_result_part_body import ToolResultPartBody
  from ..models.tool_use_part_body import ToolUsePartBody





T = TypeVar("T", bound="MessageBody")



@_attrs_define
class MessageBody:
    """ One model-visible message; parts keep their order.

        Attributes:
            role (Role): The speaker of a message (10.1).
            parts (list[CacheCheckpointPartBody | CitationsPartBody | DocumentPartBody | ImagePartBody | TextPartBody |
                ThinkingPartBody | ToolResultPartBody | ToolUsePartBody]):
            meta (MessageBodyMetaType0 | None):
     """

    role: Role
    parts: list[CacheCheckpointPartBody | CitationsPartBody | DocumentPartBody | ImagePartBody | TextPartBody | ThinkingPartBody | ToolResultPartBody | ToolUsePartBody]
    meta: MessageBodyMetaType0 | None





    def to_dict(self) -> dict[str, Any]:
        from ..models.cache_checkpoint_part_body import CacheCheckpointPartBody # noqa: PLC0415
        from ..models.citations_part_body import CitationsPartBody # noqa: PLC0415
        from ..models.document_part_body import DocumentPartBody # noqa: PLC0415
        from ..models.image_part_body import ImagePartBody # noqa: PLC0415
        from ..models.message_body_meta_type_0 import MessageBodyMetaType0 # noqa: PLC0415
        from ..models.text_part_body import TextPartBody # noqa: PLC0415
        from ..models.thinking_part_body import ThinkingPartBody # noqa: PLC0415
        from ..models.tool_result_part_body import ToolResultPartBody # noqa: PLC0415
        from ..models.tool_use_part_body import ToolUsePartBody # noqa: PLC0415
        role = self.role.value

        parts = []
        for parts_item_data in self.parts:
            parts_item: dict[str, Any]
            if isinstance(parts_item_data, TextPartBody):
                parts_item = parts_item_data.to_dict()
            elif isinstance(parts_item_data, ThinkingPartBody):
                parts_item = parts_item_data.to_dict()
            elif isinstance(parts_item_data, ImagePartBody):
                parts_item = parts_item_data.to_dict()
            elif isinstance(parts_item_data, DocumentPartBody):
                parts_item = parts_item_data.to_dict()
            elif isinstance(parts_item_data, CitationsPartBody):
                parts_item = parts_item_data.to_dict()
            elif isinstance(parts_item_data, ToolUsePartBody):
                parts_item = parts_item_data.to_dict()
            elif isinstance(parts_item_data, ToolResultPartBody):
                parts_item = parts_item_data.to_dict()
            else:
                parts_item = parts_item_data.to_dict()

            parts.append(parts_item)



        meta: dict[str, Any] | None
        if isinstance(self.meta, MessageBodyMetaType0):
            meta = self.meta.to_dict()
        else:
            meta = self.meta


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "role": role,
            "parts": parts,
            "meta": meta,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cache_checkpoint_part_body import CacheCheckpointPartBody # noqa: PLC0415
        from ..models.citations_part_body import CitationsPartBody # noqa: PLC0415
        from ..models.document_part_body import DocumentPartBody # noqa: PLC0415
        from ..models.image_part_body import ImagePartBody # noqa: PLC0415
        from ..models.message_body_meta_type_0 import MessageBodyMetaType0 # noqa: PLC0415
        from ..models.text_part_body import TextPartBody # noqa: PLC0415
        from ..models.thinking_part_body import ThinkingPartBody # noqa: PLC0415
        from ..models.tool_result_part_body import ToolResultPartBody # noqa: PLC0415
        from ..models.tool_use_part_body import ToolUsePartBody # noqa: PLC0415
        d = dict(src_dict)
        role = Role(d.pop("role"))




        parts = []
        _parts = d.pop("parts")
        for parts_item_data in (_parts):
            def _parse_parts_item(data: object) -> CacheCheckpointPartBody | CitationsPartBody | DocumentPartBody | ImagePartBody | TextPartBody | ThinkingPartBody | ToolResultPartBody | ToolUsePartBody:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    parts_item_type_0 = TextPartBody.from_dict(data)



                    return parts_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    parts_item_type_1 = ThinkingPartBody.from_dict(data)



                    return parts_item_type_1
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    parts_item_type_2 = ImagePartBody.from_dict(data)



                    return parts_item_type_2
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    parts_item_type_3 = DocumentPartBody.from_dict(data)



                    return parts_item_type_3
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    parts_item_type_4 = CitationsPartBody.from_dict(data)



                    return parts_item_type_4
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    parts_item_type_5 = ToolUsePartBody.from_dict(data)



                    return parts_item_type_5
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    parts_item_type_6 = ToolResultPartBody.from_dict(data)



                    return parts_item_type_6
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                parts_item_type_7 = CacheCheckpointPartBody.from_dict(data)



                return parts_item_type_7

            parts_item = _parse_parts_item(parts_item_data)

            parts.append(parts_item)


        def _parse_meta(data: object) -> MessageBodyMetaType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                meta_type_0 = MessageBodyMetaType0.from_dict(data)



                return meta_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MessageBodyMetaType0 | None, data)

        meta = _parse_meta(d.pop("meta"))


        message_body = cls(
            role=role,
            parts=parts,
            meta=meta,
        )

        return message_body

