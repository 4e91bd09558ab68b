from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.record_body import RecordBody
  from ..models.run_start_body import RunStartBody





T = TypeVar("T", bound="SynchronousRunStartRequest")



@_attrs_define
class SynchronousRunStartRequest:
    """ 
        Attributes:
            run (RunStartBody): Input of every start (CONTRACT.md 1.4).
            started (RecordBody): An immutable run record (CONTRACT.md 1.7).
     """

    run: RunStartBody
    started: RecordBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.record_body import RecordBody # noqa: PLC0415
        from ..models.run_start_body import RunStartBody # noqa: PLC0415
        run = self.run.to_dict()

        started = self.started.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "run": run,
            "started": started,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.record_body import RecordBody # noqa: PLC0415
        from ..models.run_start_body import RunStartBody # noqa: PLC0415
        d = dict(src_dict)
        run = RunStartBody.from_dict(d.pop("run"))




        started = RecordBody.from_dict(d.pop("started"))




        synchronous_run_start_request = cls(
            run=run,
            started=started,
        )

        return synchronous_run_start_request

