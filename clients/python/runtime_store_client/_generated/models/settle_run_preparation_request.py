from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.preparation_operation_body import PreparationOperationBody





T = TypeVar("T", bound="SettleRunPreparationRequest")



@_attrs_define
class SettleRunPreparationRequest:
    """ 
        Attributes:
            operation (PreparationOperationBody): The original command that prepares one destination run.
     """

    operation: PreparationOperationBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.preparation_operation_body import PreparationOperationBody # noqa: PLC0415
        operation = self.operation.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "operation": operation,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.preparation_operation_body import PreparationOperationBody # noqa: PLC0415
        d = dict(src_dict)
        operation = PreparationOperationBody.from_dict(d.pop("operation"))




        settle_run_preparation_request = cls(
            operation=operation,
        )

        return settle_run_preparation_request

