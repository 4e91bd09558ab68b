from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="PreparedSeedRecordBody")



@_attrs_define
class PreparedSeedRecordBody:
    """ A stored fragment of the compiled start request.

        Attributes:
            id (str): A record ID: a decimal position of the attempt.
            key (str):
            previous_id (str):
            prepared (str): Non-empty bytes as standard base64 with padding; any other spelling (unpadded, URL-safe, non-
                zero unused bits) is invalid_argument.
     """

    id: str
    key: str
    previous_id: str
    prepared: str





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        key = self.key

        previous_id = self.previous_id

        prepared = self.prepared


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "key": key,
            "previous_id": previous_id,
            "prepared": prepared,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        key = d.pop("key")

        previous_id = d.pop("previous_id")

        prepared = d.pop("prepared")

        prepared_seed_record_body = cls(
            id=id,
            key=key,
            previous_id=previous_id,
            prepared=prepared,
        )

        return prepared_seed_record_body

