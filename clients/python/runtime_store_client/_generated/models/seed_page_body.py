from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.literal_part_seed_record_body import LiteralPartSeedRecordBody
  from ..models.messages_seed_record_body import MessagesSeedRecordBody
  from ..models.prefix_seed_record_body import PrefixSeedRecordBody
  from ..models.prepared_seed_record_body import PreparedSeedRecordBody





T = TypeVar("T", bound="SeedPageBody")



@_attrs_define
class SeedPageBody:
    """ A page of a published seed's records, in position order.

        Attributes:
            records (list[LiteralPartSeedRecordBody | MessagesSeedRecordBody | PrefixSeedRecordBody |
                PreparedSeedRecordBody]): Each with exactly one variant key.
            next_cursor (str): The page's last record ID when more follow, else "".
     """

    records: list[LiteralPartSeedRecordBody | MessagesSeedRecordBody | PrefixSeedRecordBody | PreparedSeedRecordBody]
    next_cursor: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.literal_part_seed_record_body import LiteralPartSeedRecordBody # noqa: PLC0415
        from ..models.messages_seed_record_body import MessagesSeedRecordBody # noqa: PLC0415
        from ..models.prefix_seed_record_body import PrefixSeedRecordBody # noqa: PLC0415
        from ..models.prepared_seed_record_body import PreparedSeedRecordBody # noqa: PLC0415
        records = []
        for records_item_data in self.records:
            records_item: dict[str, Any]
            if isinstance(records_item_data, MessagesSeedRecordBody):
                records_item = records_item_data.to_dict()
            elif isinstance(records_item_data, LiteralPartSeedRecordBody):
                records_item = records_item_data.to_dict()
            elif isinstance(records_item_data, PrefixSeedRecordBody):
                records_item = records_item_data.to_dict()
            else:
                records_item = records_item_data.to_dict()

            records.append(records_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "records": records,
            "next_cursor": next_cursor,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.literal_part_seed_record_body import LiteralPartSeedRecordBody # noqa: PLC0415
        from ..models.messages_seed_record_body import MessagesSeedRecordBody # noqa: PLC0415
        from ..models.prefix_seed_record_body import PrefixSeedRecordBody # noqa: PLC0415
        from ..models.prepared_seed_record_body import PreparedSeedRecordBody # noqa: PLC0415
        d = dict(src_dict)
        records = []
        _records = d.pop("records")
        for records_item_data in (_records):
            def _parse_records_item(data: object) -> LiteralPartSeedRecordBody | MessagesSeedRecordBody | PrefixSeedRecordBody | PreparedSeedRecordBody:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    records_item_type_0 = MessagesSeedRecordBody.from_dict(data)



                    return records_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    records_item_type_1 = LiteralPartSeedRecordBody.from_dict(data)



                    return records_item_type_1
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    records_item_type_2 = PrefixSeedRecordBody.from_dict(data)



                    return records_item_type_2
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                records_item_type_3 = PreparedSeedRecordBody.from_dict(data)



                return records_item_type_3

            records_item = _parse_records_item(records_item_data)

            records.append(records_item)


        next_cursor = d.pop("next_cursor")

        seed_page_body = cls(
            records=records,
            next_cursor=next_cursor,
        )

        return seed_page_body

