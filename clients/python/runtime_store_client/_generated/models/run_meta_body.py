from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.run_start_kind import RunStartKind
from ..models.run_start_outcome import RunStartOutcome
from ..models.run_status import RunStatus
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.run_meta_body_labels import RunMetaBodyLabels





T = TypeVar("T", bound="RunMetaBody")



@_attrs_define
class RunMetaBody:
    """ What ``load_run`` returns (CONTRACT.md 1.5).

        Attributes:
            run_id (str):
            agent_id (str):
            session_id (str):
            parent_run_id (str):
            status (RunStatus): Status of a run; every status but ``running`` is terminal (the run takes no more
                ordinary records); ``completed``, ``failed`` and ``canceled`` are also *finished* (no
                state change can follow; a suspended run may still be repaired or continued).
            start_outcome (RunStartOutcome): Decision made by the first successful start of a run.
            started_at (datetime.datetime): RFC 3339 time with any offset, read as UTC; written as UTC with exactly three
                fraction digits and `Z`. Digits past the milliseconds must be zeros (a finer part is an error, never truncated).
            updated_at (datetime.datetime): RFC 3339 time with any offset, read as UTC; written as UTC with exactly three
                fraction digits and `Z`. Digits past the milliseconds must be zeros (a finer part is an error, never truncated).
            labels (RunMetaBodyLabels):
            cancellation_reason (str):
            successor_run_id (str): The continuation admitted for this suspended run; "" until one starts.
            start_kind (RunStartKind): How a run was started (CONTRACT.md 12.2); a run ID is for ever one kind.
            seed_end_id (str): The seed history end the run's first start attached; "" when none.
     """

    run_id: str
    agent_id: str
    session_id: str
    parent_run_id: str
    status: RunStatus
    start_outcome: RunStartOutcome
    started_at: datetime.datetime
    updated_at: datetime.datetime
    labels: RunMetaBodyLabels
    cancellation_reason: str
    successor_run_id: str
    start_kind: RunStartKind
    seed_end_id: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.run_meta_body_labels import RunMetaBodyLabels # noqa: PLC0415
        run_id = self.run_id

        agent_id = self.agent_id

        session_id = self.session_id

        parent_run_id = self.parent_run_id

        status = self.status.value

        start_outcome = self.start_outcome.value

        started_at = self.started_at.isoformat()

        updated_at = self.updated_at.isoformat()

        labels = self.labels.to_dict()

        cancellation_reason = self.cancellation_reason

        successor_run_id = self.successor_run_id

        start_kind = self.start_kind.value

        seed_end_id = self.seed_end_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "run_id": run_id,
            "agent_id": agent_id,
            "session_id": session_id,
            "parent_run_id": parent_run_id,
            "status": status,
            "start_outcome": start_outcome,
            "started_at": started_at,
            "updated_at": updated_at,
            "labels": labels,
            "cancellation_reason": cancellation_reason,
            "successor_run_id": successor_run_id,
            "start_kind": start_kind,
            "seed_end_id": seed_end_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_meta_body_labels import RunMetaBodyLabels # noqa: PLC0415
        d = dict(src_dict)
        run_id = d.pop("run_id")

        agent_id = d.pop("agent_id")

        session_id = d.pop("session_id")

        parent_run_id = d.pop("parent_run_id")

        status = RunStatus(d.pop("status"))




        start_outcome = RunStartOutcome(d.pop("start_outcome"))




        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))




        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        labels = RunMetaBodyLabels.from_dict(d.pop("labels"))




        cancellation_reason = d.pop("cancellation_reason")

        successor_run_id = d.pop("successor_run_id")

        start_kind = RunStartKind(d.pop("start_kind"))




        seed_end_id = d.pop("seed_end_id")

        run_meta_body = cls(
            run_id=run_id,
            agent_id=agent_id,
            session_id=session_id,
            parent_run_id=parent_run_id,
            status=status,
            start_outcome=start_outcome,
            started_at=started_at,
            updated_at=updated_at,
            labels=labels,
            cancellation_reason=cancellation_reason,
            successor_run_id=successor_run_id,
            start_kind=start_kind,
            seed_end_id=seed_end_id,
        )

        return run_meta_body

