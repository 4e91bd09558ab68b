from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.seed_declaration_body import SeedDeclarationBody





T = TypeVar("T", bound="BeginRunSeedRequest")



@_attrs_define
class BeginRunSeedRequest:
    """ 
        Attributes:
            declaration (SeedDeclarationBody): What one attempt prepares (CONTRACT.md 15.1), fixed by its first begin and
                compared
                on every retry. Every key is present in answers.
     """

    declaration: SeedDeclarationBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.seed_declaration_body import SeedDeclarationBody # noqa: PLC0415
        declaration = self.declaration.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "declaration": declaration,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.seed_declaration_body import SeedDeclarationBody # noqa: PLC0415
        d = dict(src_dict)
        declaration = SeedDeclarationBody.from_dict(d.pop("declaration"))




        begin_run_seed_request = cls(
            declaration=declaration,
        )

        return begin_run_seed_request

