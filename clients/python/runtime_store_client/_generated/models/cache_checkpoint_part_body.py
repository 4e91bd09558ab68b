from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import Literal, cast






T = TypeVar("T", bound="CacheCheckpointPartBody")



@_attrs_define
class CacheCheckpointPartBody:
    """ A prompt-cache boundary marker.

        Attributes:
            kind (Literal['cache_checkpoint']):
     """

    kind: Literal['cache_checkpoint']





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "kind": kind,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = cast(Literal['cache_checkpoint'] , d.pop("kind"))
        if kind != 'cache_checkpoint':
            raise ValueError(f"kind must match const 'cache_checkpoint', got '{kind}'")

        cache_checkpoint_part_body = cls(
            kind=kind,
        )

        return cache_checkpoint_part_body

