from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.session_status import SessionStatus






T = TypeVar("T", bound="SessionStatusBody")



@_attrs_define
class SessionStatusBody:
    """ 
        Attributes:
            status (SessionStatus): Status of a host-owned session (a purged session has none).
     """

    status: SessionStatus





    def to_dict(self) -> dict[str, Any]:
        status = self.status.value


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "status": status,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        status = SessionStatus(d.pop("status"))




        session_status_body = cls(
            status=status,
        )

        return session_status_body

