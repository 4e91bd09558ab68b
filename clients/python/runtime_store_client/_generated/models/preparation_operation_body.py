from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="PreparationOperationBody")



@_attrs_define
class PreparationOperationBody:
    """ The original command that prepares one destination run.

        Attributes:
            agent_id (str):
            run_id (str): The path's run ID.
            command_id (str):
            session_id (str | Unset):  Default: ''.
     """

    agent_id: str
    run_id: str
    command_id: str
    session_id: str | Unset = ''





    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        run_id = self.run_id

        command_id = self.command_id

        session_id = self.session_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "agent_id": agent_id,
            "run_id": run_id,
            "command_id": command_id,
        })
        if session_id is not UNSET:
            field_dict["session_id"] = session_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        run_id = d.pop("run_id")

        command_id = d.pop("command_id")

        session_id = d.pop("session_id", UNSET)

        preparation_operation_body = cls(
            agent_id=agent_id,
            run_id=run_id,
            command_id=command_id,
            session_id=session_id,
        )

        return preparation_operation_body

