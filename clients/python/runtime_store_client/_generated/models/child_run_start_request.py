from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.record_body import RecordBody
  from ..models.session_run_start_body import SessionRunStartBody





T = TypeVar("T", bound="ChildRunStartRequest")



@_attrs_define
class ChildRunStartRequest:
    """ 
        Attributes:
            run (SessionRunStartBody): Input of a root or child start (CONTRACT.md 1.4): the run's session is required.
            parent_linked (RecordBody): An immutable run record (CONTRACT.md 1.7).
            started (RecordBody): An immutable run record (CONTRACT.md 1.7).
            canceled (RecordBody): An immutable run record (CONTRACT.md 1.7).
            request_digest (None | str | Unset): The request digest of an engine start (CONTRACT.md 12.1): 32 bytes, not all
                zero, as 64 lowercase hex characters; absent or null: none. The run's first start stores it; a retry must carry
                the same one, and a closed run's start replayed with it may propose new times.
     """

    run: SessionRunStartBody
    parent_linked: RecordBody
    started: RecordBody
    canceled: RecordBody
    request_digest: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.record_body import RecordBody # noqa: PLC0415
        from ..models.session_run_start_body import SessionRunStartBody # noqa: PLC0415
        run = self.run.to_dict()

        parent_linked = self.parent_linked.to_dict()

        started = self.started.to_dict()

        canceled = self.canceled.to_dict()

        request_digest: None | str | Unset
        if isinstance(self.request_digest, Unset):
            request_digest = UNSET
        else:
            request_digest = self.request_digest


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "run": run,
            "parent_linked": parent_linked,
            "started": started,
            "canceled": canceled,
        })
        if request_digest is not UNSET:
            field_dict["request_digest"] = request_digest

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.record_body import RecordBody # noqa: PLC0415
        from ..models.session_run_start_body import SessionRunStartBody # noqa: PLC0415
        d = dict(src_dict)
        run = SessionRunStartBody.from_dict(d.pop("run"))




        parent_linked = RecordBody.from_dict(d.pop("parent_linked"))




        started = RecordBody.from_dict(d.pop("started"))




        canceled = RecordBody.from_dict(d.pop("canceled"))




        def _parse_request_digest(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        request_digest = _parse_request_digest(d.pop("request_digest", UNSET))


        child_run_start_request = cls(
            run=run,
            parent_linked=parent_linked,
            started=started,
            canceled=canceled,
            request_digest=request_digest,
        )

        return child_run_start_request

