"""Strict JSON reading and writing of the transcript's dataclasses, field by field.

Each field of a part (or of a nested object such as ``Citation``) is read and written by a
codec chosen from its type: ``str``, ``int`` and ``bool`` as themselves, ``bytes`` as
canonical base64, an enum as its value, a nested dataclass as an object with exactly its
fields' keys (``list[...]`` of them as an array), ``dict`` and ``Any`` as JSON values;
``X | None`` also takes ``null``. A field's ``non_empty`` metadata (see
:func:`.model.non_empty`) adds its rule. So a class's keys and their JSON types are
written once: in the class.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import (
    Any,
    TypeGuard,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from ._json import check_string, fail, json_type, json_value, require_object
from .model import NON_EMPTY, DocumentFormat, ImageFormat, JSONValue, Role
from .violations import TranscriptRule

_T = TypeVar("_T")
_E = TypeVar("_E", bound=enum.StrEnum)
#: Reads a JSON value at a path of message ``index``, or writes a Python one.
_Codec = Callable[[Any, str, int], Any]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

#: The rule a value outside an enum breaks.
_ENUM_RULES: Mapping[type[enum.StrEnum], TranscriptRule] = {
    Role: TranscriptRule.UNKNOWN_ROLE,
    ImageFormat: TranscriptRule.IMAGE_FORMAT,
    DocumentFormat: TranscriptRule.DOCUMENT_FORMAT,
}


def _read_string(value: Any, path: str, index: int) -> str:
    if not isinstance(value, str):
        fail(index, TranscriptRule.WRONG_TYPE, path, f"must be a string, got {json_type(value)}")
    return check_string(value, path, index)


def _read_bool(value: Any, path: str, index: int) -> bool:
    if not isinstance(value, bool):
        fail(index, TranscriptRule.WRONG_TYPE, path, f"must be a boolean, got {json_type(value)}")
    return value


def _read_int(value: Any, path: str, index: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        fail(index, TranscriptRule.WRONG_TYPE, path, f"must be an integer, got {json_type(value)}")
    if not _INT64_MIN <= value <= _INT64_MAX:
        fail(index, TranscriptRule.INTEGER_RANGE, path, "integer out of the signed 64-bit range")
    return value


def read_enum(enum_type: type[_E], value: Any, path: str, index: int) -> _E:
    text = _read_string(value, path, index)
    try:
        return enum_type(text)
    except ValueError:
        allowed = ", ".join(member.value for member in enum_type)
        fail(index, _ENUM_RULES[enum_type], path, f"{text!r} is not one of {allowed}")


def _read_json_object(value: Any, path: str, index: int) -> dict[str, JSONValue]:
    if not isinstance(value, dict):
        fail(
            index, TranscriptRule.WRONG_TYPE, path, f"must be a JSON object, got {json_type(value)}"
        )
    copied: dict[str, JSONValue] = json_value(value, path, index)
    return copied


def _same(value: Any, _path: str, _index: int) -> Any:
    return value


def _as_str(value: Any, _path: str, _index: int) -> str:
    return str(value)


def _list_copy(value: Any, _path: str, _index: int) -> Any:
    return list(value) if isinstance(value, list | tuple) else value


def _enum(enum_type: type[enum.StrEnum]) -> _Codec:
    def read(value: Any, path: str, index: int) -> enum.StrEnum:
        return read_enum(enum_type, value, path, index)

    return read


def _base64(nullable: bool) -> tuple[_Codec, _Codec]:
    wanted = "a base64 string or null" if nullable else "a base64 string"

    def read(value: Any, path: str, index: int) -> bytes | None:
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            fail(
                index, TranscriptRule.WRONG_TYPE, path, f"must be {wanted}, got {json_type(value)}"
            )
        try:
            raw = base64.b64decode(value.encode("ascii"), validate=True)
        except ValueError:
            raw = None
        if raw is None or base64.b64encode(raw).decode("ascii") != value:
            fail(index, TranscriptRule.INVALID_BASE64, path, "not canonical standard base64")
        return raw

    def write(value: Any, path: str, index: int) -> str | None:
        if value is None and nullable:
            return None
        if not isinstance(value, bytes | bytearray):
            fail(index, TranscriptRule.WRONG_TYPE, path, f"must be bytes, got {json_type(value)}")
        return base64.b64encode(value).decode("ascii")

    return read, write


def _strings(item_rule: tuple[TranscriptRule, str] | None) -> _Codec:
    """An array of strings or null; with ``item_rule``, every string non-empty."""

    def read(value: Any, path: str, index: int) -> list[str] | None:
        if value is None:
            return None
        if not isinstance(value, list):
            wrong = f"must be an array of strings or null, got {json_type(value)}"
            fail(index, TranscriptRule.WRONG_TYPE, path, wrong)
        out: list[str] = []
        for i, item in enumerate(value):
            out.append(_read_string(item, f"{path}[{i}]", index))
            if item_rule is not None and not item:
                fail(index, item_rule[0], f"{path}[{i}]", item_rule[1])
        return out

    return read


def _non_empty(read: _Codec, rule: tuple[TranscriptRule, str]) -> _Codec:
    def read_non_empty(value: Any, path: str, index: int) -> Any:
        found = read(value, path, index)
        if not found:
            fail(index, rule[0], path, rule[1])
        return found

    return read_non_empty


def _nested(cls: type[Any], nullable: bool) -> tuple[_Codec, _Codec]:
    """A nested dataclass: an object with exactly its fields' keys."""
    wanted = f"a {cls.__name__} or None" if nullable else f"a {cls.__name__}"
    keys = keys_of(cls)

    def read(value: Any, path: str, index: int) -> Any:
        if value is None and nullable:
            return None
        return read_fields(cls, require_object(value, path, index, keys), path, index)

    def write(value: Any, path: str, index: int) -> Any:
        if value is None and nullable:
            return None
        if not isinstance(value, cls):
            fail(index, TranscriptRule.WRONG_TYPE, path, f"must be {wanted}")
        return write_fields(cls, value, path, index)

    return read, write


def _array(cls: type[Any]) -> tuple[_Codec, _Codec]:
    """An array of a nested dataclass (never null)."""
    read_item, write_item = _nested(cls, nullable=False)

    def read(value: Any, path: str, index: int) -> list[Any]:
        if not isinstance(value, list):
            fail(
                index, TranscriptRule.WRONG_TYPE, path, f"must be an array, got {json_type(value)}"
            )
        return [read_item(item, f"{path}[{i}]", index) for i, item in enumerate(value)]

    def write(value: Any, path: str, index: int) -> list[Any]:
        if not isinstance(value, list | tuple):
            fail(index, TranscriptRule.WRONG_TYPE, path, f"must be a list of {cls.__name__}")
        return [write_item(item, f"{path}[{i}]", index) for i, item in enumerate(value)]

    return read, write


# --- fields ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Field:
    name: str
    read: _Codec
    write: _Codec


def _is_dataclass_type(hint: object) -> TypeGuard[type[Any]]:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


#: Types read and written as themselves (after a check of their JSON type).
_SCALARS: Mapping[object, tuple[_Codec, _Codec]] = {
    str: (_read_string, _same),
    int: (_read_int, _same),
    bool: (_read_bool, _same),
    Any: (json_value, json_value),
}


def _codecs(hint: Any, rule: tuple[TranscriptRule, str] | None) -> tuple[_Codec, _Codec]:
    """How a field of type ``hint`` is read and written; ``rule`` is its non-empty rule."""
    args = get_args(hint)
    nullable = get_origin(hint) in {Union, types.UnionType} and type(None) in args
    if nullable:
        (hint,) = (arg for arg in args if arg is not type(None))
    if get_origin(hint) is list and get_args(hint) == (str,) and nullable:
        # The rule of a string list applies to each string.
        return _strings(rule), _list_copy
    read, write = _nullable_codecs(hint) if nullable else _plain_codecs(hint)
    if rule is None:
        return read, write
    if nullable or hint not in (str, bytes):
        raise TypeError(f"a non-empty rule needs a str or bytes field, not {hint!r}")
    return _non_empty(read, rule), write


def _nullable_codecs(hint: Any) -> tuple[_Codec, _Codec]:
    if hint is bytes:
        return _base64(nullable=True)
    if _is_dataclass_type(hint):
        return _nested(hint, nullable=True)
    raise TypeError(f"no JSON form for a nullable {hint!r}")


def _plain_codecs(hint: Any) -> tuple[_Codec, _Codec]:
    scalar = _SCALARS.get(hint)
    if scalar is not None:
        return scalar
    if hint is bytes:
        return _base64(nullable=False)
    if isinstance(hint, type) and issubclass(hint, enum.StrEnum):
        return _enum(hint), _as_str
    if _is_dataclass_type(hint):
        return _nested(hint, nullable=False)
    origin, args = get_origin(hint), get_args(hint)
    if origin is list and _is_dataclass_type(args[0]):
        return _array(args[0])
    if origin is dict:
        return _read_json_object, json_value
    raise TypeError(f"no JSON form for {hint!r}")


_FIELDS: dict[type[Any], tuple[_Field, ...]] = {}


def _fields_of(cls: type[Any]) -> tuple[_Field, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        hints = get_type_hints(cls)
        found = tuple(
            _Field(field.name, *_codecs(hints[field.name], field.metadata.get(NON_EMPTY)))
            for field in dataclasses.fields(cls)
        )
        _FIELDS[cls] = found
    return found


def keys_of(cls: type[Any]) -> tuple[str, ...]:
    """A dataclass's JSON keys: its field names, in order.

    It also builds the codecs of ``cls`` (and of the classes nested in it), so a field
    type without a JSON form fails at import, not at the first message.
    """
    return tuple(field.name for field in _fields_of(cls))


def read_fields(cls: type[_T], obj: Mapping[str, Any], path: str, index: int) -> _T:
    """An instance of ``cls`` from an object already checked to have exactly its keys."""
    return cls(
        **{
            field.name: field.read(obj[field.name], f"{path}.{field.name}", index)
            for field in _fields_of(cls)
        }
    )


def write_fields(cls: type[Any], value: Any, path: str, index: int) -> dict[str, Any]:
    """The JSON object of ``value``'s ``cls`` fields, in field order."""
    return {
        field.name: field.write(getattr(value, field.name), f"{path}.{field.name}", index)
        for field in _fields_of(cls)
    }
