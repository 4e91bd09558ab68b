from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.record_counts_body_runs import RecordCountsBodyRuns
  from ..models.record_counts_body_sessions import RecordCountsBodySessions





T = TypeVar("T", bound="RecordCountsBody")



@_attrs_define
class RecordCountsBody:
    """ The number of records of each run and session asked for; unknown and purged IDs
    are left out.

        Attributes:
            runs (RecordCountsBodyRuns): Run ID to its number of records.
            sessions (RecordCountsBodySessions): Session ID to the number of records of all its runs.
     """

    runs: RecordCountsBodyRuns
    sessions: RecordCountsBodySessions





    def to_dict(self) -> dict[str, Any]:
        from ..models.record_counts_body_runs import RecordCountsBodyRuns # noqa: PLC0415
        from ..models.record_counts_body_sessions import RecordCountsBodySessions # noqa: PLC0415
        runs = self.runs.to_dict()

        sessions = self.sessions.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "runs": runs,
            "sessions": sessions,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.record_counts_body_runs import RecordCountsBodyRuns # noqa: PLC0415
        from ..models.record_counts_body_sessions import RecordCountsBodySessions # noqa: PLC0415
        d = dict(src_dict)
        runs = RecordCountsBodyRuns.from_dict(d.pop("runs"))




        sessions = RecordCountsBodySessions.from_dict(d.pop("sessions"))




        record_counts_body = cls(
            runs=runs,
            sessions=sessions,
        )

        return record_counts_body

