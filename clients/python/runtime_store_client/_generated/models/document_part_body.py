from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.document_format import DocumentFormat
from typing import cast
from typing import Literal, cast






T = TypeVar("T", bound="DocumentPartBody")



@_attrs_define
class DocumentPartBody:
    """ Exactly one of ``bytes``, ``text``, ``chunks`` and ``uri`` is set.

        Attributes:
            kind (Literal['document']):
            name (str):
            format_ (DocumentFormat):
            bytes_ (None | str):
            text (str):
            chunks (list[str] | None):
            uri (str):
            context (str):
            cite (bool):
     """

    kind: Literal['document']
    name: str
    format_: DocumentFormat
    bytes_: None | str
    text: str
    chunks: list[str] | None
    uri: str
    context: str
    cite: bool





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        name = self.name

        format_ = self.format_.value

        bytes_: None | str
        bytes_ = self.bytes_

        text = self.text

        chunks: list[str] | None
        if isinstance(self.chunks, list):
            chunks = self.chunks


        else:
            chunks = self.chunks

        uri = self.uri

        context = self.context

        cite = self.cite


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "kind": kind,
            "name": name,
            "format": format_,
            "bytes": bytes_,
            "text": text,
            "chunks": chunks,
            "uri": uri,
            "context": context,
            "cite": cite,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = cast(Literal['document'] , d.pop("kind"))
        if kind != 'document':
            raise ValueError(f"kind must match const 'document', got '{kind}'")

        name = d.pop("name")

        format_ = DocumentFormat(d.pop("format"))




        def _parse_bytes_(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        bytes_ = _parse_bytes_(d.pop("bytes"))


        text = d.pop("text")

        def _parse_chunks(data: object) -> list[str] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                chunks_type_0 = cast(list[str], data)

                return chunks_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None, data)

        chunks = _parse_chunks(d.pop("chunks"))


        uri = d.pop("uri")

        context = d.pop("context")

        cite = d.pop("cite")

        document_part_body = cls(
            kind=kind,
            name=name,
            format_=format_,
            bytes_=bytes_,
            text=text,
            chunks=chunks,
            uri=uri,
            context=context,
            cite=cite,
        )

        return document_part_body

