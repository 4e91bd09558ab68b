"""JSON is bounded: at most 128 arrays and objects deep (CONTRACT.md 2.8).

The one home of the bound. Every JSON value the store receives (a record payload, memory
``data``, label values, and the request body that carries them) is measured here before
anything parses or writes it: deeper is ``invalid_argument``. Two measures:

* ``text_nests_deeper`` reads JSON *text* (bytes) without parsing it: it counts ``[``/``{``
  against ``]``/``}`` outside strings, so a depth bomb costs a linear byte scan, never a
  recursion. Text that is not JSON is measured all the same (it is refused later anyway).
* ``value_nests_deeper`` walks a parsed Python value (dicts, lists, tuples) with an
  explicit stack, so a value built in Python as deep as memory allows is refused without a
  ``RecursionError``.

Depth counts containers: a scalar is 0 deep, ``[]`` and ``{}`` are 1, ``[{}]`` is 2.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import accumulate
from typing import Final

from runtime_store_client import InvalidArgumentError

#: Arrays and objects one JSON value may nest (CONTRACT.md 2.8; a contract bound, not a
#: setting).
MAX_JSON_DEPTH: Final = 128

#: Every byte but the four brackets, deleted before counting.
#: Levels a request body wraps around the deepest value it carries (a memory event's
#: ``data``: the body, ``events``, the event).
BODY_ENVELOPE_DEPTH: Final = 3
#: Arrays and objects a JSON request body may nest (CONTRACT.md 2.8).
MAX_BODY_DEPTH: Final = MAX_JSON_DEPTH + BODY_ENVELOPE_DEPTH

_NOT_BRACKETS: Final = bytes(byte for byte in range(256) if byte not in b"[]{}")
#: Openers as +1 and closers as -1 (0xFF read as a signed byte).
_SIGNS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
#: Brackets summed per step of the scan (so a bomb is refused after its first chunk).
_CHUNK: Final = 1 << 16


def text_nests_deeper(text: bytes | str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON ``text`` nests more than ``limit`` arrays and objects deep.

    Linear in the text and never recursive. Most texts hold fewer than ``limit`` brackets
    in all and are answered by two counts.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    if b'"' in data:
        data = _outside_strings(data)
    signs = memoryview(data.translate(_SIGNS, _NOT_BRACKETS)).cast("b")
    depth = 0
    for start in range(0, len(signs), _CHUNK):
        depths = list(accumulate(signs[start : start + _CHUNK], initial=depth))
        if max(depths) > limit:
            return True
        depth = depths[-1]
    return False


def _outside_strings(data: bytes) -> bytes:
    """``data`` without its JSON strings: their brackets are text, not structure.

    Escapes pair backslashes from the left, so dropping ``\\\\`` and then ``\\"`` leaves
    every remaining quote a string's delimiter; the text between the 2nd and 3rd quote,
    the 4th and 5th, ... is outside strings. Every step runs in C (no match per string).
    """
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(data.split(b'"')[::2])


def value_nests_deeper(value: object, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a parsed value nests more than ``limit`` mappings and lists deep."""
    stack: list[tuple[Iterable[object], int]] = []
    children = _children(value)
    if children is not None:
        stack.append((children, 1))
    while stack:
        items, depth = stack.pop()
        if depth > limit:
            return True
        for item in items:
            children = _children(item)
            if children is not None:
                stack.append((children, depth + 1))
    return False


def _children(value: object) -> Iterable[object] | None:
    """The items of a container (a mapping's values); ``None`` for a scalar."""
    if isinstance(value, Mapping):
        return value.values()
    if isinstance(value, list | tuple):
        return value
    return None


def too_deep(what: str, limit: int = MAX_JSON_DEPTH) -> InvalidArgumentError:
    """The refusal of a value nested deeper than ``limit``."""
    return InvalidArgumentError(
        f"{what} nests deeper than {limit} arrays and objects (docs/contract.md 2.8)"
    )


def check_text_depth(text: bytes | str, what: str) -> None:
    """``invalid_argument`` when JSON ``text`` nests deeper than ``MAX_JSON_DEPTH``."""
    if text_nests_deeper(text):
        raise too_deep(what)


def check_value_depth(value: object, what: str) -> None:
    """``invalid_argument`` when a parsed value nests deeper than ``MAX_JSON_DEPTH``."""
    if value_nests_deeper(value):
        raise too_deep(what)


def body_too_deep_detail() -> str:
    """The refusal of a request body nested deeper than ``MAX_BODY_DEPTH``."""
    return (
        f"the request body nests deeper than {MAX_BODY_DEPTH} arrays and objects; a JSON "
        f"value in it may nest at most {MAX_JSON_DEPTH} (docs/contract.md 2.8)"
    )
