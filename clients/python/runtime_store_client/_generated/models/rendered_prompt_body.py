from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.prompt_scope_body import PromptScopeBody





T = TypeVar("T", bound="RenderedPromptBody")



@_attrs_define
class RenderedPromptBody:
    """ The identity of a prompt already rendered into a literal.

        Attributes:
            prompt_id (str):
            version (str):
            scope (None | PromptScopeBody | Unset): Absent or null: no session, no labels.
     """

    prompt_id: str
    version: str
    scope: None | PromptScopeBody | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.prompt_scope_body import PromptScopeBody # noqa: PLC0415
        prompt_id = self.prompt_id

        version = self.version

        scope: dict[str, Any] | None | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        elif isinstance(self.scope, PromptScopeBody):
            scope = self.scope.to_dict()
        else:
            scope = self.scope


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "prompt_id": prompt_id,
            "version": version,
        })
        if scope is not UNSET:
            field_dict["scope"] = scope

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.prompt_scope_body import PromptScopeBody # noqa: PLC0415
        d = dict(src_dict)
        prompt_id = d.pop("prompt_id")

        version = d.pop("version")

        def _parse_scope(data: object) -> None | PromptScopeBody | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                scope_type_0 = PromptScopeBody.from_dict(data)



                return scope_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PromptScopeBody | Unset, data)

        scope = _parse_scope(d.pop("scope", UNSET))


        rendered_prompt_body = cls(
            prompt_id=prompt_id,
            version=version,
            scope=scope,
        )

        return rendered_prompt_body

