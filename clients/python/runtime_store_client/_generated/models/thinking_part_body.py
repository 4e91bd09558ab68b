from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
from typing import Literal, cast






T = TypeVar("T", bound="ThinkingPartBody")



@_attrs_define
class ThinkingPartBody:
    """ Provider reasoning: plaintext with a signature, or redacted bytes.

        Attributes:
            kind (Literal['thinking']):
            text (str):
            signature (str):
            redacted (None | str):
            index (int):
            final (bool):
     """

    kind: Literal['thinking']
    text: str
    signature: str
    redacted: None | str
    index: int
    final: bool





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        text = self.text

        signature = self.signature

        redacted: None | str
        redacted = self.redacted

        index = self.index

        final = self.final


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "kind": kind,
            "text": text,
            "signature": signature,
            "redacted": redacted,
            "index": index,
            "final": final,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = cast(Literal['thinking'] , d.pop("kind"))
        if kind != 'thinking':
            raise ValueError(f"kind must match const 'thinking', got '{kind}'")

        text = d.pop("text")

        signature = d.pop("signature")

        def _parse_redacted(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        redacted = _parse_redacted(d.pop("redacted"))


        index = d.pop("index")

        final = d.pop("final")

        thinking_part_body = cls(
            kind=kind,
            text=text,
            signature=signature,
            redacted=redacted,
            index=index,
            final=final,
        )

        return thinking_part_body

