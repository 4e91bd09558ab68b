from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.run_preparation_body import RunPreparationBody





T = TypeVar("T", bound="PreparationAnswerBody")



@_attrs_define
class PreparationAnswerBody:
    """ The accepted preparation of the operation, or none (``found`` false).

        Attributes:
            found (bool):
            preparation (None | RunPreparationBody):
     """

    found: bool
    preparation: None | RunPreparationBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.run_preparation_body import RunPreparationBody # noqa: PLC0415
        found = self.found

        preparation: dict[str, Any] | None
        if isinstance(self.preparation, RunPreparationBody):
            preparation = self.preparation.to_dict()
        else:
            preparation = self.preparation


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "found": found,
            "preparation": preparation,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_preparation_body import RunPreparationBody # noqa: PLC0415
        d = dict(src_dict)
        found = d.pop("found")

        def _parse_preparation(data: object) -> None | RunPreparationBody:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                preparation_type_0 = RunPreparationBody.from_dict(data)



                return preparation_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunPreparationBody, data)

        preparation = _parse_preparation(d.pop("preparation"))


        preparation_answer_body = cls(
            found=found,
            preparation=preparation,
        )

        return preparation_answer_body

