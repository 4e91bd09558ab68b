from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.seed_kind import SeedKind
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.rendered_prompt_body import RenderedPromptBody





T = TypeVar("T", bound="SeedDeclarationBody")



@_attrs_define
class SeedDeclarationBody:
    """ What one attempt prepares (CONTRACT.md 15.1), fixed by its first begin and compared
    on every retry. Every key is present in answers.

        Attributes:
            agent_id (str):
            run_id (str): The run the seed prepares.
            command_id (str): The original command.
            attempt_id (str): Chosen by the caller.
            kind (SeedKind): What a seed's history is made of (15.1).
            session_id (str | Unset): Required for next_turn and continuation; "" when sessionless. Default: ''.
            source_run_id (str | Unset): The inherited run (next_turn, continuation); "" for literal. Default: ''.
            source_end_id (str | Unset): A continuation's exact record of the source; else "". Default: ''.
            exclude_reasoning (bool | Unset): Only for next_turn. Default: False.
            rendered_prompts (list[RenderedPromptBody] | None | Unset): In order; absent, null and [] are equal.
     """

    agent_id: str
    run_id: str
    command_id: str
    attempt_id: str
    kind: SeedKind
    session_id: str | Unset = ''
    source_run_id: str | Unset = ''
    source_end_id: str | Unset = ''
    exclude_reasoning: bool | Unset = False
    rendered_prompts: list[RenderedPromptBody] | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.rendered_prompt_body import RenderedPromptBody # noqa: PLC0415
        agent_id = self.agent_id

        run_id = self.run_id

        command_id = self.command_id

        attempt_id = self.attempt_id

        kind = self.kind.value

        session_id = self.session_id

        source_run_id = self.source_run_id

        source_end_id = self.source_end_id

        exclude_reasoning = self.exclude_reasoning

        rendered_prompts: list[dict[str, Any]] | None | Unset
        if isinstance(self.rendered_prompts, Unset):
            rendered_prompts = UNSET
        elif isinstance(self.rendered_prompts, list):
            rendered_prompts = []
            for rendered_prompts_type_0_item_data in self.rendered_prompts:
                rendered_prompts_type_0_item = rendered_prompts_type_0_item_data.to_dict()
                rendered_prompts.append(rendered_prompts_type_0_item)


        else:
            rendered_prompts = self.rendered_prompts


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "agent_id": agent_id,
            "run_id": run_id,
            "command_id": command_id,
            "attempt_id": attempt_id,
            "kind": kind,
        })
        if session_id is not UNSET:
            field_dict["session_id"] = session_id
        if source_run_id is not UNSET:
            field_dict["source_run_id"] = source_run_id
        if source_end_id is not UNSET:
            field_dict["source_end_id"] = source_end_id
        if exclude_reasoning is not UNSET:
            field_dict["exclude_reasoning"] = exclude_reasoning
        if rendered_prompts is not UNSET:
            field_dict["rendered_prompts"] = rendered_prompts

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.rendered_prompt_body import RenderedPromptBody # noqa: PLC0415
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        run_id = d.pop("run_id")

        command_id = d.pop("command_id")

        attempt_id = d.pop("attempt_id")

        kind = SeedKind(d.pop("kind"))




        session_id = d.pop("session_id", UNSET)

        source_run_id = d.pop("source_run_id", UNSET)

        source_end_id = d.pop("source_end_id", UNSET)

        exclude_reasoning = d.pop("exclude_reasoning", UNSET)

        def _parse_rendered_prompts(data: object) -> list[RenderedPromptBody] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                rendered_prompts_type_0 = []
                _rendered_prompts_type_0 = data
                for rendered_prompts_type_0_item_data in (_rendered_prompts_type_0):
                    rendered_prompts_type_0_item = RenderedPromptBody.from_dict(rendered_prompts_type_0_item_data)



                    rendered_prompts_type_0.append(rendered_prompts_type_0_item)

                return rendered_prompts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[RenderedPromptBody] | None | Unset, data)

        rendered_prompts = _parse_rendered_prompts(d.pop("rendered_prompts", UNSET))


        seed_declaration_body = cls(
            agent_id=agent_id,
            run_id=run_id,
            command_id=command_id,
            attempt_id=attempt_id,
            kind=kind,
            session_id=session_id,
            source_run_id=source_run_id,
            source_end_id=source_end_id,
            exclude_reasoning=exclude_reasoning,
            rendered_prompts=rendered_prompts,
        )

        return seed_declaration_body

