from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.session_body import SessionBody





T = TypeVar("T", bound="SessionPageBody")



@_attrs_define
class SessionPageBody:
    """ A page of sessions, newest `created_at` first, ties by ID.

        Attributes:
            sessions (list[SessionBody]):
            next_cursor (str):
     """

    sessions: list[SessionBody]
    next_cursor: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.session_body import SessionBody # noqa: PLC0415
        sessions = []
        for sessions_item_data in self.sessions:
            sessions_item = sessions_item_data.to_dict()
            sessions.append(sessions_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "sessions": sessions,
            "next_cursor": next_cursor,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session_body import SessionBody # noqa: PLC0415
        d = dict(src_dict)
        sessions = []
        _sessions = d.pop("sessions")
        for sessions_item_data in (_sessions):
            sessions_item = SessionBody.from_dict(sessions_item_data)



            sessions.append(sessions_item)


        next_cursor = d.pop("next_cursor")

        session_page_body = cls(
            sessions=sessions,
            next_cursor=next_cursor,
        )

        return session_page_body

