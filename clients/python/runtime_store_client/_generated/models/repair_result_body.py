from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.repair_outcome import RepairOutcome
from ..models.run_status import RunStatus
from typing import cast

if TYPE_CHECKING:
  from ..models.append_result_body import AppendResultBody





T = TypeVar("T", bound="RepairResultBody")



@_attrs_define
class RepairResultBody:
    """ 
        Attributes:
            outcome (RepairOutcome): Result of ``repair_run_suspension`` / ``repair_run_terminal``.
            status (RunStatus): Status of a run; every status but ``running`` is terminal (the run takes no more
                ordinary records); ``completed``, ``failed`` and ``canceled`` are also *finished* (no
                state change can follow; a suspended run may still be repaired or continued).
            record (AppendResultBody | None): Null for different_terminal.
     """

    outcome: RepairOutcome
    status: RunStatus
    record: AppendResultBody | None





    def to_dict(self) -> dict[str, Any]:
        from ..models.append_result_body import AppendResultBody # noqa: PLC0415
        outcome = self.outcome.value

        status = self.status.value

        record: dict[str, Any] | None
        if isinstance(self.record, AppendResultBody):
            record = self.record.to_dict()
        else:
            record = self.record


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "outcome": outcome,
            "status": status,
            "record": record,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.append_result_body import AppendResultBody # noqa: PLC0415
        d = dict(src_dict)
        outcome = RepairOutcome(d.pop("outcome"))




        status = RunStatus(d.pop("status"))




        def _parse_record(data: object) -> AppendResultBody | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                record_type_0 = AppendResultBody.from_dict(data)



                return record_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AppendResultBody | None, data)

        record = _parse_record(d.pop("record"))


        repair_result_body = cls(
            outcome=outcome,
            status=status,
            record=record,
        )

        return repair_result_body

