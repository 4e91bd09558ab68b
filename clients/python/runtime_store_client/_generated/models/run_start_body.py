from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.run_start_body_labels_type_0 import RunStartBodyLabelsType0





T = TypeVar("T", bound="RunStartBody")



@_attrs_define
class RunStartBody:
    """ Input of every start (CONTRACT.md 1.4).

        Attributes:
            run_id (str): The run ID (the workflow ID).
            agent_id (str):
            started_at (datetime.datetime): RFC 3339 time with any offset, read as UTC; written as UTC with exactly three
                fraction digits and `Z`. Digits past the milliseconds must be zeros (a finer part is an error, never truncated).
            session_id (str | Unset): "" for the sessionless starts this body serves (one-shot and synchronous); root and
                child starts name their session (SessionRunStartBody). Default: ''.
            parent_run_id (str | Unset): Required for child starts. Default: ''.
            predecessor_run_id (str | Unset): The suspended run this start continues, if any. Default: ''.
            labels (None | RunStartBodyLabelsType0 | Unset): String labels; absent, null and {} are equal.
            seed_end_id (None | str | Unset): The published seed history end this start attaches (CONTRACT.md 15.5); absent,
                null and "" mean none.
     """

    run_id: str
    agent_id: str
    started_at: datetime.datetime
    session_id: str | Unset = ''
    parent_run_id: str | Unset = ''
    predecessor_run_id: str | Unset = ''
    labels: None | RunStartBodyLabelsType0 | Unset = UNSET
    seed_end_id: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.run_start_body_labels_type_0 import RunStartBodyLabelsType0 # noqa: PLC0415
        run_id = self.run_id

        agent_id = self.agent_id

        started_at = self.started_at.isoformat()

        session_id = self.session_id

        parent_run_id = self.parent_run_id

        predecessor_run_id = self.predecessor_run_id

        labels: dict[str, Any] | None | Unset
        if isinstance(self.labels, Unset):
            labels = UNSET
        elif isinstance(self.labels, RunStartBodyLabelsType0):
            labels = self.labels.to_dict()
        else:
            labels = self.labels

        seed_end_id: None | str | Unset
        if isinstance(self.seed_end_id, Unset):
            seed_end_id = UNSET
        else:
            seed_end_id = self.seed_end_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "run_id": run_id,
            "agent_id": agent_id,
            "started_at": started_at,
        })
        if session_id is not UNSET:
            field_dict["session_id"] = session_id
        if parent_run_id is not UNSET:
            field_dict["parent_run_id"] = parent_run_id
        if predecessor_run_id is not UNSET:
            field_dict["predecessor_run_id"] = predecessor_run_id
        if labels is not UNSET:
            field_dict["labels"] = labels
        if seed_end_id is not UNSET:
            field_dict["seed_end_id"] = seed_end_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_start_body_labels_type_0 import RunStartBodyLabelsType0 # noqa: PLC0415
        d = dict(src_dict)
        run_id = d.pop("run_id")

        agent_id = d.pop("agent_id")

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))




        session_id = d.pop("session_id", UNSET)

        parent_run_id = d.pop("parent_run_id", UNSET)

        predecessor_run_id = d.pop("predecessor_run_id", UNSET)

        def _parse_labels(data: object) -> None | RunStartBodyLabelsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                labels_type_0 = RunStartBodyLabelsType0.from_dict(data)



                return labels_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunStartBodyLabelsType0 | Unset, data)

        labels = _parse_labels(d.pop("labels", UNSET))


        def _parse_seed_end_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        seed_end_id = _parse_seed_end_id(d.pop("seed_end_id", UNSET))


        run_start_body = cls(
            run_id=run_id,
            agent_id=agent_id,
            started_at=started_at,
            session_id=session_id,
            parent_run_id=parent_run_id,
            predecessor_run_id=predecessor_run_id,
            labels=labels,
            seed_end_id=seed_end_id,
        )

        return run_start_body

