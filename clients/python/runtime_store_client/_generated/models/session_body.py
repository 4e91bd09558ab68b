from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.session_status import SessionStatus
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="SessionBody")



@_attrs_define
class SessionBody:
    """ A host-owned session.

        Attributes:
            id (str): The session ID.
            status (SessionStatus): Status of a host-owned session (a purged session has none).
            created_at (datetime.datetime): RFC 3339 time with any offset, read as UTC; written as UTC with exactly three
                fraction digits and `Z`. Digits past the milliseconds must be zeros (a finer part is an error, never truncated).
            ended_at (datetime.datetime | None | Unset): First end time; null while active.
     """

    id: str
    status: SessionStatus
    created_at: datetime.datetime
    ended_at: datetime.datetime | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        status = self.status.value

        created_at = self.created_at.isoformat()

        ended_at: None | str | Unset
        if isinstance(self.ended_at, Unset):
            ended_at = UNSET
        elif isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "status": status,
            "created_at": created_at,
        })
        if ended_at is not UNSET:
            field_dict["ended_at"] = ended_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        status = SessionStatus(d.pop("status"))




        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        def _parse_ended_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)



                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        ended_at = _parse_ended_at(d.pop("ended_at", UNSET))


        session_body = cls(
            id=id,
            status=status,
            created_at=created_at,
            ended_at=ended_at,
        )

        return session_body

