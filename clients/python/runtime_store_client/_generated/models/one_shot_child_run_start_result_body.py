from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.run_status import RunStatus
from typing import cast

if TYPE_CHECKING:
  from ..models.append_result_body import AppendResultBody





T = TypeVar("T", bound="OneShotChildRunStartResultBody")



@_attrs_define
class OneShotChildRunStartResultBody:
    """ 
        Attributes:
            run_status (RunStatus): Status of a run; every status but ``running`` is terminal (the run takes no more
                ordinary records); ``completed``, ``failed`` and ``canceled`` are also *finished* (no
                state change can follow; a suspended run may still be repaired or continued).
            parent_record (AppendResultBody): The result of writing one record.
            started (AppendResultBody): The result of writing one record.
     """

    run_status: RunStatus
    parent_record: AppendResultBody
    started: AppendResultBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.append_result_body import AppendResultBody # noqa: PLC0415
        run_status = self.run_status.value

        parent_record = self.parent_record.to_dict()

        started = self.started.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "run_status": run_status,
            "parent_record": parent_record,
            "started": started,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.append_result_body import AppendResultBody # noqa: PLC0415
        d = dict(src_dict)
        run_status = RunStatus(d.pop("run_status"))




        parent_record = AppendResultBody.from_dict(d.pop("parent_record"))




        started = AppendResultBody.from_dict(d.pop("started"))




        one_shot_child_run_start_result_body = cls(
            run_status=run_status,
            parent_record=parent_record,
            started=started,
        )

        return one_shot_child_run_start_result_body

