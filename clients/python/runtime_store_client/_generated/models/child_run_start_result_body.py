from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.run_start_outcome import RunStartOutcome
from ..models.run_status import RunStatus
from typing import cast

if TYPE_CHECKING:
  from ..models.append_result_body import AppendResultBody





T = TypeVar("T", bound="ChildRunStartResultBody")



@_attrs_define
class ChildRunStartResultBody:
    """ 
        Attributes:
            outcome (RunStartOutcome): Decision made by the first successful start of a run.
            run_status (RunStatus): Status of a run; every status but ``running`` is terminal (the run takes no more
                ordinary records); ``completed``, ``failed`` and ``canceled`` are also *finished* (no
                state change can follow; a suspended run may still be repaired or continued).
            parent_record (AppendResultBody): The result of writing one record.
            started (AppendResultBody): The result of writing one record.
            canceled (AppendResultBody | None):
     """

    outcome: RunStartOutcome
    run_status: RunStatus
    parent_record: AppendResultBody
    started: AppendResultBody
    canceled: AppendResultBody | None





    def to_dict(self) -> dict[str, Any]:
        from ..models.append_result_body import AppendResultBody # noqa: PLC0415
        outcome = self.outcome.value

        run_status = self.run_status.value

        parent_record = self.parent_record.to_dict()

        started = self.started.to_dict()

        canceled: dict[str, Any] | None
        if isinstance(self.canceled, AppendResultBody):
            canceled = self.canceled.to_dict()
        else:
            canceled = self.canceled


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "outcome": outcome,
            "run_status": run_status,
            "parent_record": parent_record,
            "started": started,
            "canceled": canceled,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.append_result_body import AppendResultBody # noqa: PLC0415
        d = dict(src_dict)
        outcome = RunStartOutcome(d.pop("outcome"))




        run_status = RunStatus(d.pop("run_status"))




        parent_record = AppendResultBody.from_dict(d.pop("parent_record"))




        started = AppendResultBody.from_dict(d.pop("started"))




        def _parse_canceled(data: object) -> AppendResultBody | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                canceled_type_0 = AppendResultBody.from_dict(data)



                return canceled_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AppendResultBody | None, data)

        canceled = _parse_canceled(d.pop("canceled"))


        child_run_start_result_body = cls(
            outcome=outcome,
            run_status=run_status,
            parent_record=parent_record,
            started=started,
            canceled=canceled,
        )

        return child_run_start_result_body

