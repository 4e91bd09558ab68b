from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
from typing import Literal, cast

if TYPE_CHECKING:
  from ..models.citation_body import CitationBody





T = TypeVar("T", bound="CitationsPartBody")



@_attrs_define
class CitationsPartBody:
    """ 
        Attributes:
            kind (Literal['citations']):
            text (str):
            citations (list[CitationBody]):
     """

    kind: Literal['citations']
    text: str
    citations: list[CitationBody]





    def to_dict(self) -> dict[str, Any]:
        from ..models.citation_body import CitationBody # noqa: PLC0415
        kind = self.kind

        text = self.text

        citations = []
        for citations_item_data in self.citations:
            citations_item = citations_item_data.to_dict()
            citations.append(citations_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "kind": kind,
            "text": text,
            "citations": citations,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.citation_body import CitationBody # noqa: PLC0415
        d = dict(src_dict)
        kind = cast(Literal['citations'] , d.pop("kind"))
        if kind != 'citations':
            raise ValueError(f"kind must match const 'citations', got '{kind}'")

        text = d.pop("text")

        citations = []
        _citations = d.pop("citations")
        for citations_item_data in (_citations):
            citations_item = CitationBody.from_dict(citations_item_data)



            citations.append(citations_item)


        citations_part_body = cls(
            kind=kind,
            text=text,
            citations=citations,
        )

        return citations_part_body

