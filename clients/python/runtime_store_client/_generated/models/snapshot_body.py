from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.memory_event_body import MemoryEventBody





T = TypeVar("T", bound="SnapshotBody")



@_attrs_define
class SnapshotBody:
    """ 
        Attributes:
            agent_id (str):
            run_id (str):
            events (list[MemoryEventBody]):
     """

    agent_id: str
    run_id: str
    events: list[MemoryEventBody]





    def to_dict(self) -> dict[str, Any]:
        from ..models.memory_event_body import MemoryEventBody # noqa: PLC0415
        agent_id = self.agent_id

        run_id = self.run_id

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.to_dict()
            events.append(events_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "agent_id": agent_id,
            "run_id": run_id,
            "events": events,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.memory_event_body import MemoryEventBody # noqa: PLC0415
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        run_id = d.pop("run_id")

        events = []
        _events = d.pop("events")
        for events_item_data in (_events):
            events_item = MemoryEventBody.from_dict(events_item_data)



            events.append(events_item)


        snapshot_body = cls(
            agent_id=agent_id,
            run_id=run_id,
            events=events,
        )

        return snapshot_body

