from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="HistoryPrefixBody")



@_attrs_define
class HistoryPrefixBody:
    """ An earlier run's history through ``end_id``, with what to leave out of it.

        Attributes:
            run_id (str):
            end_id (str): A record ID of that run.
            exclude_system (bool):
            exclude_reasoning (bool):
     """

    run_id: str
    end_id: str
    exclude_system: bool
    exclude_reasoning: bool





    def to_dict(self) -> dict[str, Any]:
        run_id = self.run_id

        end_id = self.end_id

        exclude_system = self.exclude_system

        exclude_reasoning = self.exclude_reasoning


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "run_id": run_id,
            "end_id": end_id,
            "exclude_system": exclude_system,
            "exclude_reasoning": exclude_reasoning,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        run_id = d.pop("run_id")

        end_id = d.pop("end_id")

        exclude_system = d.pop("exclude_system")

        exclude_reasoning = d.pop("exclude_reasoning")

        history_prefix_body = cls(
            run_id=run_id,
            end_id=end_id,
            exclude_system=exclude_system,
            exclude_reasoning=exclude_reasoning,
        )

        return history_prefix_body

