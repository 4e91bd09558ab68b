from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="PublishRunSeedRequest")



@_attrs_define
class PublishRunSeedRequest:
    """ 
        Attributes:
            seed_end_id (str): The attempt's history end.
            end_id (str): The attempt's body end.
            prepared_bytes (int): The total length of its prepared data.
     """

    seed_end_id: str
    end_id: str
    prepared_bytes: int





    def to_dict(self) -> dict[str, Any]:
        seed_end_id = self.seed_end_id

        end_id = self.end_id

        prepared_bytes = self.prepared_bytes


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "seed_end_id": seed_end_id,
            "end_id": end_id,
            "prepared_bytes": prepared_bytes,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        seed_end_id = d.pop("seed_end_id")

        end_id = d.pop("end_id")

        prepared_bytes = d.pop("prepared_bytes")

        publish_run_seed_request = cls(
            seed_end_id=seed_end_id,
            end_id=end_id,
            prepared_bytes=prepared_bytes,
        )

        return publish_run_seed_request

