from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.memory_event_body_type import MemoryEventBodyType
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.memory_event_body_data import MemoryEventBodyData
  from ..models.memory_event_body_labels_type_0 import MemoryEventBodyLabelsType0





T = TypeVar("T", bound="MemoryEventBody")



@_attrs_define
class MemoryEventBody:
    """ One product-memory event.

        Attributes:
            type_ (MemoryEventBodyType): user_message, assistant_message, tool_call, tool_result, planner_note or thinking.
            timestamp (datetime.datetime): RFC 3339 time with any offset, read as UTC; written as UTC with exactly three
                fraction digits and `Z`. Digits past the milliseconds must be zeros (a finer part is an error, never truncated).
            data (MemoryEventBodyData | Unset): A JSON object (free-form event data).
            labels (MemoryEventBodyLabelsType0 | None | Unset): String labels; absent, null and {} are equal.
     """

    type_: MemoryEventBodyType
    timestamp: datetime.datetime
    data: MemoryEventBodyData | Unset = UNSET
    labels: MemoryEventBodyLabelsType0 | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.memory_event_body_data import MemoryEventBodyData # noqa: PLC0415
        from ..models.memory_event_body_labels_type_0 import MemoryEventBodyLabelsType0 # noqa: PLC0415
        type_ = self.type_.value

        timestamp = self.timestamp.isoformat()

        data: dict[str, Any] | Unset = UNSET
        if not isinstance(self.data, Unset):
            data = self.data.to_dict()

        labels: dict[str, Any] | None | Unset
        if isinstance(self.labels, Unset):
            labels = UNSET
        elif isinstance(self.labels, MemoryEventBodyLabelsType0):
            labels = self.labels.to_dict()
        else:
            labels = self.labels


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "type": type_,
            "timestamp": timestamp,
        })
        if data is not UNSET:
            field_dict["data"] = data
        if labels is not UNSET:
            field_dict["labels"] = labels

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.memory_event_body_data import MemoryEventBodyData # noqa: PLC0415
        from ..models.memory_event_body_labels_type_0 import MemoryEventBodyLabelsType0 # noqa: PLC0415
        d = dict(src_dict)
        type_ = MemoryEventBodyType(d.pop("type"))




        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))




        _data = d.pop("data", UNSET)
        data: MemoryEventBodyData | Unset
        if isinstance(_data,  Unset):
            data = UNSET
        else:
            data = MemoryEventBodyData.from_dict(_data)




        def _parse_labels(data: object) -> MemoryEventBodyLabelsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                labels_type_0 = MemoryEventBodyLabelsType0.from_dict(data)



                return labels_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MemoryEventBodyLabelsType0 | None | Unset, data)

        labels = _parse_labels(d.pop("labels", UNSET))


        memory_event_body = cls(
            type_=type_,
            timestamp=timestamp,
            data=data,
            labels=labels,
        )

        return memory_event_body

