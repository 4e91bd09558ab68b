from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="SeedAppendResultBody")



@_attrs_define
class SeedAppendResultBody:
    """ 
        Attributes:
            id (str): The record's position (the original one on an exact retry).
            inserted (bool): False for an exact retry.
     """

    id: str
    inserted: bool





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        inserted = self.inserted


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "inserted": inserted,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        inserted = d.pop("inserted")

        seed_append_result_body = cls(
            id=id,
            inserted=inserted,
        )

        return seed_append_result_body

