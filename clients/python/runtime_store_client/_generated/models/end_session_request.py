from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="EndSessionRequest")



@_attrs_define
class EndSessionRequest:
    """ 
        Attributes:
            ended_at (datetime.datetime): RFC 3339 time with any offset, read as UTC; written as UTC with exactly three
                fraction digits and `Z`. Digits past the milliseconds must be zeros (a finer part is an error, never truncated).
     """

    ended_at: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        ended_at = self.ended_at.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "ended_at": ended_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ended_at = datetime.datetime.fromisoformat(d.pop("ended_at"))




        end_session_request = cls(
            ended_at=ended_at,
        )

        return end_session_request

