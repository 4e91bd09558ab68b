from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="RecordBody")



@_attrs_define
class RecordBody:
    """ An immutable run record (CONTRACT.md 1.7).

        Attributes:
            event_key (str):
            run_id (str):
            agent_id (str):
            type_ (str):
            payload (str): The exact JSON text of the payload; stored and returned byte for byte (never re-serialised).
            timestamp (datetime.datetime): RFC 3339 time with any offset, read as UTC; written as UTC with exactly three
                fraction digits and `Z`. Digits past the milliseconds must be zeros (a finer part is an error, never truncated).
            id (str | Unset): Assigned by the store; ignored on input. Default: ''.
            session_id (str | Unset): The run's session; "" for sessionless runs. Default: ''.
            turn_id (str | Unset):  Default: ''.
     """

    event_key: str
    run_id: str
    agent_id: str
    type_: str
    payload: str
    timestamp: datetime.datetime
    id: str | Unset = ''
    session_id: str | Unset = ''
    turn_id: str | Unset = ''





    def to_dict(self) -> dict[str, Any]:
        event_key = self.event_key

        run_id = self.run_id

        agent_id = self.agent_id

        type_ = self.type_

        payload = self.payload

        timestamp = self.timestamp.isoformat()

        id = self.id

        session_id = self.session_id

        turn_id = self.turn_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "event_key": event_key,
            "run_id": run_id,
            "agent_id": agent_id,
            "type": type_,
            "payload": payload,
            "timestamp": timestamp,
        })
        if id is not UNSET:
            field_dict["id"] = id
        if session_id is not UNSET:
            field_dict["session_id"] = session_id
        if turn_id is not UNSET:
            field_dict["turn_id"] = turn_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        event_key = d.pop("event_key")

        run_id = d.pop("run_id")

        agent_id = d.pop("agent_id")

        type_ = d.pop("type")

        payload = d.pop("payload")

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))




        id = d.pop("id", UNSET)

        session_id = d.pop("session_id", UNSET)

        turn_id = d.pop("turn_id", UNSET)

        record_body = cls(
            event_key=event_key,
            run_id=run_id,
            agent_id=agent_id,
            type_=type_,
            payload=payload,
            timestamp=timestamp,
            id=id,
            session_id=session_id,
            turn_id=turn_id,
        )

        return record_body

