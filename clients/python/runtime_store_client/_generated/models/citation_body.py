from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.citation_location_body import CitationLocationBody





T = TypeVar("T", bound="CitationBody")



@_attrs_define
class CitationBody:
    """ 
        Attributes:
            title (str):
            source (str):
            location (CitationLocationBody):
            source_content (list[str] | None):
     """

    title: str
    source: str
    location: CitationLocationBody
    source_content: list[str] | None





    def to_dict(self) -> dict[str, Any]:
        from ..models.citation_location_body import CitationLocationBody # noqa: PLC0415
        title = self.title

        source = self.source

        location = self.location.to_dict()

        source_content: list[str] | None
        if isinstance(self.source_content, list):
            source_content = self.source_content


        else:
            source_content = self.source_content


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "title": title,
            "source": source,
            "location": location,
            "source_content": source_content,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.citation_location_body import CitationLocationBody # noqa: PLC0415
        d = dict(src_dict)
        title = d.pop("title")

        source = d.pop("source")

        location = CitationLocationBody.from_dict(d.pop("location"))




        def _parse_source_content(data: object) -> list[str] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                source_content_type_0 = cast(list[str], data)

                return source_content_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None, data)

        source_content = _parse_source_content(d.pop("source_content"))


        citation_body = cls(
            title=title,
            source=source,
            location=location,
            source_content=source_content,
        )

        return citation_body

