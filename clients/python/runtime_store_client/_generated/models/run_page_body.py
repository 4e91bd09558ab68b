from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.run_meta_body import RunMetaBody





T = TypeVar("T", bound="RunPageBody")



@_attrs_define
class RunPageBody:
    """ 
        Attributes:
            runs (list[RunMetaBody]):
            next_cursor (str):
     """

    runs: list[RunMetaBody]
    next_cursor: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.run_meta_body import RunMetaBody # noqa: PLC0415
        runs = []
        for runs_item_data in self.runs:
            runs_item = runs_item_data.to_dict()
            runs.append(runs_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "runs": runs,
            "next_cursor": next_cursor,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_meta_body import RunMetaBody # noqa: PLC0415
        d = dict(src_dict)
        runs = []
        _runs = d.pop("runs")
        for runs_item_data in (_runs):
            runs_item = RunMetaBody.from_dict(runs_item_data)



            runs.append(runs_item)


        next_cursor = d.pop("next_cursor")

        run_page_body = cls(
            runs=runs,
            next_cursor=next_cursor,
        )

        return run_page_body

