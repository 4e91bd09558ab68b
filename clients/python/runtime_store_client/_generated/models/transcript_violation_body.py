from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="TranscriptViolationBody")



@_attrs_define
class TranscriptViolationBody:
    """ One broken transcript rule.

        Attributes:
            index (int): Index of the message (-1: the payload as a whole).
            rule (str):
            message (str):
     """

    index: int
    rule: str
    message: str





    def to_dict(self) -> dict[str, Any]:
        index = self.index

        rule = self.rule

        message = self.message


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "index": index,
            "rule": rule,
            "message": message,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        index = d.pop("index")

        rule = d.pop("rule")

        message = d.pop("message")

        transcript_violation_body = cls(
            index=index,
            rule=rule,
            message=message,
        )

        return transcript_violation_body

