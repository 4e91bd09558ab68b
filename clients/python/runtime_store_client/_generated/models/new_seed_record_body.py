from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.history_prefix_body import HistoryPrefixBody
  from ..models.literal_part_body import LiteralPartBody





T = TypeVar("T", bound="NewSeedRecordBody")



@_attrs_define
class NewSeedRecordBody:
    """ A seed record to append: exactly one of `messages`, `literal_part`, `prefix`
    and `prepared` (the others absent or null).

        Attributes:
            key (str): Unique within the attempt: a lost append is retryable.
            previous_id (str): The record this one follows ("0": the first).
            id (str | Unset): Assigned by the store: absent or "" on input. Default: ''.
            messages (None | str | Unset):
            literal_part (LiteralPartBody | None | Unset):
            prefix (HistoryPrefixBody | None | Unset):
            prepared (None | str | Unset): The next fragment of the compiled start request.
     """

    key: str
    previous_id: str
    id: str | Unset = ''
    messages: None | str | Unset = UNSET
    literal_part: LiteralPartBody | None | Unset = UNSET
    prefix: HistoryPrefixBody | None | Unset = UNSET
    prepared: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.history_prefix_body import HistoryPrefixBody # noqa: PLC0415
        from ..models.literal_part_body import LiteralPartBody # noqa: PLC0415
        key = self.key

        previous_id = self.previous_id

        id = self.id

        messages: None | str | Unset
        if isinstance(self.messages, Unset):
            messages = UNSET
        else:
            messages = self.messages

        literal_part: dict[str, Any] | None | Unset
        if isinstance(self.literal_part, Unset):
            literal_part = UNSET
        elif isinstance(self.literal_part, LiteralPartBody):
            literal_part = self.literal_part.to_dict()
        else:
            literal_part = self.literal_part

        prefix: dict[str, Any] | None | Unset
        if isinstance(self.prefix, Unset):
            prefix = UNSET
        elif isinstance(self.prefix, HistoryPrefixBody):
            prefix = self.prefix.to_dict()
        else:
            prefix = self.prefix

        prepared: None | str | Unset
        if isinstance(self.prepared, Unset):
            prepared = UNSET
        else:
            prepared = self.prepared


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "key": key,
            "previous_id": previous_id,
        })
        if id is not UNSET:
            field_dict["id"] = id
        if messages is not UNSET:
            field_dict["messages"] = messages
        if literal_part is not UNSET:
            field_dict["literal_part"] = literal_part
        if prefix is not UNSET:
            field_dict["prefix"] = prefix
        if prepared is not UNSET:
            field_dict["prepared"] = prepared

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.history_prefix_body import HistoryPrefixBody # noqa: PLC0415
        from ..models.literal_part_body import LiteralPartBody # noqa: PLC0415
        d = dict(src_dict)
        key = d.pop("key")

        previous_id = d.pop("previous_id")

        id = d.pop("id", UNSET)

        def _parse_messages(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        messages = _parse_messages(d.pop("messages", UNSET))


        def _parse_literal_part(data: object) -> LiteralPartBody | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                literal_part_type_0 = LiteralPartBody.from_dict(data)



                return literal_part_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LiteralPartBody | None | Unset, data)

        literal_part = _parse_literal_part(d.pop("literal_part", UNSET))


        def _parse_prefix(data: object) -> HistoryPrefixBody | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                prefix_type_0 = HistoryPrefixBody.from_dict(data)



                return prefix_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HistoryPrefixBody | None | Unset, data)

        prefix = _parse_prefix(d.pop("prefix", UNSET))


        def _parse_prepared(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        prepared = _parse_prepared(d.pop("prepared", UNSET))


        new_seed_record_body = cls(
            key=key,
            previous_id=previous_id,
            id=id,
            messages=messages,
            literal_part=literal_part,
            prefix=prefix,
            prepared=prepared,
        )

        return new_seed_record_body

