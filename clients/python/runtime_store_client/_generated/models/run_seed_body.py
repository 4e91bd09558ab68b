from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.history_prefix_body import HistoryPrefixBody
  from ..models.seed_declaration_body import SeedDeclarationBody





T = TypeVar("T", bound="RunSeedBody")



@_attrs_define
class RunSeedBody:
    """ A declared seed: its declaration, its resolved source, its history end.

        Attributes:
            declaration (SeedDeclarationBody): What one attempt prepares (CONTRACT.md 15.1), fixed by its first begin and
                compared
                on every retry. Every key is present in answers.
            source (HistoryPrefixBody | None): Null for a literal seed.
            end_id (str): The history end ("0": no history record).
     """

    declaration: SeedDeclarationBody
    source: HistoryPrefixBody | None
    end_id: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.history_prefix_body import HistoryPrefixBody # noqa: PLC0415
        from ..models.seed_declaration_body import SeedDeclarationBody # noqa: PLC0415
        declaration = self.declaration.to_dict()

        source: dict[str, Any] | None
        if isinstance(self.source, HistoryPrefixBody):
            source = self.source.to_dict()
        else:
            source = self.source

        end_id = self.end_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "declaration": declaration,
            "source": source,
            "end_id": end_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.history_prefix_body import HistoryPrefixBody # noqa: PLC0415
        from ..models.seed_declaration_body import SeedDeclarationBody # noqa: PLC0415
        d = dict(src_dict)
        declaration = SeedDeclarationBody.from_dict(d.pop("declaration"))




        def _parse_source(data: object) -> HistoryPrefixBody | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                source_type_0 = HistoryPrefixBody.from_dict(data)



                return source_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HistoryPrefixBody | None, data)

        source = _parse_source(d.pop("source"))


        end_id = d.pop("end_id")

        run_seed_body = cls(
            declaration=declaration,
            source=source,
            end_id=end_id,
        )

        return run_seed_body

