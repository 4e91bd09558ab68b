from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.session_status import SessionStatus
from typing import cast






T = TypeVar("T", bound="AppendResultBody")



@_attrs_define
class AppendResultBody:
    """ The result of writing one record.

        Attributes:
            id (str): The record ID (the original one on an exact retry).
            inserted (bool): False for an exact retry.
            session_status (None | SessionStatus): The owning session's status in the same transaction; null if sessionless.
     """

    id: str
    inserted: bool
    session_status: None | SessionStatus





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        inserted = self.inserted

        session_status: None | str
        if isinstance(self.session_status, SessionStatus):
            session_status = self.session_status.value
        else:
            session_status = self.session_status


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "inserted": inserted,
            "session_status": session_status,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        inserted = d.pop("inserted")

        def _parse_session_status(data: object) -> None | SessionStatus:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                session_status_type_0 = SessionStatus(data)



                return session_status_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SessionStatus, data)

        session_status = _parse_session_status(d.pop("session_status"))


        append_result_body = cls(
            id=id,
            inserted=inserted,
            session_status=session_status,
        )

        return append_result_body

