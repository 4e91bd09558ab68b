from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.document_location_body import DocumentLocationBody





T = TypeVar("T", bound="CitationLocationBody")



@_attrs_define
class CitationLocationBody:
    """ 
        Attributes:
            document_char (DocumentLocationBody | None):
            document_chunk (DocumentLocationBody | None):
            document_page (DocumentLocationBody | None):
     """

    document_char: DocumentLocationBody | None
    document_chunk: DocumentLocationBody | None
    document_page: DocumentLocationBody | None





    def to_dict(self) -> dict[str, Any]:
        from ..models.document_location_body import DocumentLocationBody # noqa: PLC0415
        document_char: dict[str, Any] | None
        if isinstance(self.document_char, DocumentLocationBody):
            document_char = self.document_char.to_dict()
        else:
            document_char = self.document_char

        document_chunk: dict[str, Any] | None
        if isinstance(self.document_chunk, DocumentLocationBody):
            document_chunk = self.document_chunk.to_dict()
        else:
            document_chunk = self.document_chunk

        document_page: dict[str, Any] | None
        if isinstance(self.document_page, DocumentLocationBody):
            document_page = self.document_page.to_dict()
        else:
            document_page = self.document_page


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "document_char": document_char,
            "document_chunk": document_chunk,
            "document_page": document_page,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.document_location_body import DocumentLocationBody # noqa: PLC0415
        d = dict(src_dict)
        def _parse_document_char(data: object) -> DocumentLocationBody | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                document_char_type_0 = DocumentLocationBody.from_dict(data)



                return document_char_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DocumentLocationBody | None, data)

        document_char = _parse_document_char(d.pop("document_char"))


        def _parse_document_chunk(data: object) -> DocumentLocationBody | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                document_chunk_type_0 = DocumentLocationBody.from_dict(data)



                return document_chunk_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DocumentLocationBody | None, data)

        document_chunk = _parse_document_chunk(d.pop("document_chunk"))


        def _parse_document_page(data: object) -> DocumentLocationBody | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                document_page_type_0 = DocumentLocationBody.from_dict(data)



                return document_page_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DocumentLocationBody | None, data)

        document_page = _parse_document_page(d.pop("document_page"))


        citation_location_body = cls(
            document_char=document_char,
            document_chunk=document_chunk,
            document_page=document_page,
        )

        return citation_location_body

