from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.whoami_body_mode import WhoamiBodyMode
from ..models.whoami_body_permissions_item import WhoamiBodyPermissionsItem
from ..models.whoami_body_role import WhoamiBodyRole
from typing import cast






T = TypeVar("T", bound="WhoamiBody")



@_attrs_define
class WhoamiBody:
    """ The caller's token and what it may do, or the open mode.

        Attributes:
            mode (WhoamiBodyMode): `tokens` when the service requires a bearer token, `open` when it runs without
                authentication.
            name (str): The token's name; empty in open mode.
            role (WhoamiBodyRole): The token's role; `admin` in open mode (anyone may do anything).
            permissions (list[WhoamiBodyPermissionsItem]): What the role may do: `read`, `write`, `admin`.
     """

    mode: WhoamiBodyMode
    name: str
    role: WhoamiBodyRole
    permissions: list[WhoamiBodyPermissionsItem]





    def to_dict(self) -> dict[str, Any]:
        mode = self.mode.value

        name = self.name

        role = self.role.value

        permissions = []
        for permissions_item_data in self.permissions:
            permissions_item = permissions_item_data.value
            permissions.append(permissions_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "mode": mode,
            "name": name,
            "role": role,
            "permissions": permissions,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        mode = WhoamiBodyMode(d.pop("mode"))




        name = d.pop("name")

        role = WhoamiBodyRole(d.pop("role"))




        permissions = []
        _permissions = d.pop("permissions")
        for permissions_item_data in (_permissions):
            permissions_item = WhoamiBodyPermissionsItem(permissions_item_data)



            permissions.append(permissions_item)


        whoami_body = cls(
            mode=mode,
            name=name,
            role=role,
            permissions=permissions,
        )

        return whoami_body

