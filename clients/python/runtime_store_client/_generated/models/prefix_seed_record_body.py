from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.history_prefix_body import HistoryPrefixBody





T = TypeVar("T", bound="PrefixSeedRecordBody")



@_attrs_define
class PrefixSeedRecordBody:
    """ The stored place of the source's history.

        Attributes:
            id (str): A record ID: a decimal position of the attempt.
            key (str):
            previous_id (str):
            prefix (HistoryPrefixBody): An earlier run's history through ``end_id``, with what to leave out of it.
     """

    id: str
    key: str
    previous_id: str
    prefix: HistoryPrefixBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.history_prefix_body import HistoryPrefixBody # noqa: PLC0415
        id = self.id

        key = self.key

        previous_id = self.previous_id

        prefix = self.prefix.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "key": key,
            "previous_id": previous_id,
            "prefix": prefix,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.history_prefix_body import HistoryPrefixBody # noqa: PLC0415
        d = dict(src_dict)
        id = d.pop("id")

        key = d.pop("key")

        previous_id = d.pop("previous_id")

        prefix = HistoryPrefixBody.from_dict(d.pop("prefix"))




        prefix_seed_record_body = cls(
            id=id,
            key=key,
            previous_id=previous_id,
            prefix=prefix,
        )

        return prefix_seed_record_body

