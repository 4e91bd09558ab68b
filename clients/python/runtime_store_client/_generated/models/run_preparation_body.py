from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.run_seed_body import RunSeedBody





T = TypeVar("T", bound="RunPreparationBody")



@_attrs_define
class RunPreparationBody:
    """ A published seed with its compiled start: body end and ``prepared`` byte total.

        Attributes:
            seed (RunSeedBody): A declared seed: its declaration, its resolved source, its history end.
            end_id (str): The body end: the attempt's last record.
            prepared_bytes (int): The total length of its prepared data.
     """

    seed: RunSeedBody
    end_id: str
    prepared_bytes: int





    def to_dict(self) -> dict[str, Any]:
        from ..models.run_seed_body import RunSeedBody # noqa: PLC0415
        seed = self.seed.to_dict()

        end_id = self.end_id

        prepared_bytes = self.prepared_bytes


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "seed": seed,
            "end_id": end_id,
            "prepared_bytes": prepared_bytes,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_seed_body import RunSeedBody # noqa: PLC0415
        d = dict(src_dict)
        seed = RunSeedBody.from_dict(d.pop("seed"))




        end_id = d.pop("end_id")

        prepared_bytes = d.pop("prepared_bytes")

        run_preparation_body = cls(
            seed=seed,
            end_id=end_id,
            prepared_bytes=prepared_bytes,
        )

        return run_preparation_body

