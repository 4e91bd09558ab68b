from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.status_counts_body_counts import StatusCountsBodyCounts





T = TypeVar("T", bound="StatusCountsBody")



@_attrs_define
class StatusCountsBody:
    """ How many of each status the list holds, every status present (0 included).

        Attributes:
            counts (StatusCountsBodyCounts): Status to count; a count equal to `limit` means at least that many.
            limit (int): The bound of every count.
     """

    counts: StatusCountsBodyCounts
    limit: int





    def to_dict(self) -> dict[str, Any]:
        from ..models.status_counts_body_counts import StatusCountsBodyCounts # noqa: PLC0415
        counts = self.counts.to_dict()

        limit = self.limit


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "counts": counts,
            "limit": limit,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.status_counts_body_counts import StatusCountsBodyCounts # noqa: PLC0415
        d = dict(src_dict)
        counts = StatusCountsBodyCounts.from_dict(d.pop("counts"))




        limit = d.pop("limit")

        status_counts_body = cls(
            counts=counts,
            limit=limit,
        )

        return status_counts_body

