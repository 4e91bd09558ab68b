from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.prompt_scope_body_labels_type_0 import PromptScopeBodyLabelsType0





T = TypeVar("T", bound="PromptScopeBody")



@_attrs_define
class PromptScopeBody:
    """ Where a rendered prompt applies; labels compare as a map.

        Attributes:
            session_id (str | Unset):  Default: ''.
            labels (None | PromptScopeBodyLabelsType0 | Unset): String labels; absent, null and {} are equal.
     """

    session_id: str | Unset = ''
    labels: None | PromptScopeBodyLabelsType0 | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.prompt_scope_body_labels_type_0 import PromptScopeBodyLabelsType0 # noqa: PLC0415
        session_id = self.session_id

        labels: dict[str, Any] | None | Unset
        if isinstance(self.labels, Unset):
            labels = UNSET
        elif isinstance(self.labels, PromptScopeBodyLabelsType0):
            labels = self.labels.to_dict()
        else:
            labels = self.labels


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if session_id is not UNSET:
            field_dict["session_id"] = session_id
        if labels is not UNSET:
            field_dict["labels"] = labels

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.prompt_scope_body_labels_type_0 import PromptScopeBodyLabelsType0 # noqa: PLC0415
        d = dict(src_dict)
        session_id = d.pop("session_id", UNSET)

        def _parse_labels(data: object) -> None | PromptScopeBodyLabelsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                labels_type_0 = PromptScopeBodyLabelsType0.from_dict(data)



                return labels_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PromptScopeBodyLabelsType0 | Unset, data)

        labels = _parse_labels(d.pop("labels", UNSET))


        prompt_scope_body = cls(
            session_id=session_id,
            labels=labels,
        )

        return prompt_scope_body

