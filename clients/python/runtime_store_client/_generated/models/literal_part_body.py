from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="LiteralPartBody")



@_attrs_define
class LiteralPartBody:
    """ The next fragment of one literal message array spanning several records.

        Attributes:
            data (str): Non-empty bytes as standard base64 with padding; any other spelling (unpadded, URL-safe, non-zero
                unused bits) is invalid_argument.
            final (bool): True on the fragment that completes the literal.
     """

    data: str
    final: bool





    def to_dict(self) -> dict[str, Any]:
        data = self.data

        final = self.final


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "data": data,
            "final": final,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        data = d.pop("data")

        final = d.pop("final")

        literal_part_body = cls(
            data=data,
            final=final,
        )

        return literal_part_body

