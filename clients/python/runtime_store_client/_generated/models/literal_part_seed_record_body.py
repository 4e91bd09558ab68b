from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.literal_part_body import LiteralPartBody





T = TypeVar("T", bound="LiteralPartSeedRecordBody")



@_attrs_define
class LiteralPartSeedRecordBody:
    """ A stored fragment of a literal spanning several records.

        Attributes:
            id (str): A record ID: a decimal position of the attempt.
            key (str):
            previous_id (str):
            literal_part (LiteralPartBody): The next fragment of one literal message array spanning several records.
     """

    id: str
    key: str
    previous_id: str
    literal_part: LiteralPartBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.literal_part_body import LiteralPartBody # noqa: PLC0415
        id = self.id

        key = self.key

        previous_id = self.previous_id

        literal_part = self.literal_part.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "key": key,
            "previous_id": previous_id,
            "literal_part": literal_part,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.literal_part_body import LiteralPartBody # noqa: PLC0415
        d = dict(src_dict)
        id = d.pop("id")

        key = d.pop("key")

        previous_id = d.pop("previous_id")

        literal_part = LiteralPartBody.from_dict(d.pop("literal_part"))




        literal_part_seed_record_body = cls(
            id=id,
            key=key,
            previous_id=previous_id,
            literal_part=literal_part,
        )

        return literal_part_seed_record_body

