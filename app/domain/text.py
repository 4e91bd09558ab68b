"""Text is text, the same on every database (CONTRACT.md 2.6).

Every string the store receives must be valid Unicode: a lone surrogate cannot be encoded
as UTF-8, so no database can hold it. Strings kept in plain text columns (IDs, event keys,
types, ``turn_id``, checkpoint IDs, reasons, idempotency keys) must also hold no NUL:
PostgreSQL refuses it and SQLite would keep it, so both refuse it here. Strings kept as
JSON text (labels, memory data, payloads) escape NUL and keep it.
"""

from __future__ import annotations

from runtime_store_client import InvalidArgumentError


def check_unicode(value: str, what: str) -> None:
    """``invalid_argument`` for a lone surrogate (not encodable as UTF-8)."""
    if value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentError(
            f"{what} holds a lone surrogate; text must be valid Unicode"
        ) from None


def check_plain_text(value: str, what: str) -> None:
    """Text for a plain column: valid Unicode and no NUL."""
    check_unicode(value, what)
    if "\x00" in value:
        raise InvalidArgumentError(f"{what} must not contain a NUL character")


def escape_lone_surrogates(value: str) -> str:
    """``value`` with each lone surrogate written as its JSON escape (``\\ud83d``), so text
    that is not valid Unicode can still be shown and encoded as UTF-8 (a problem that names
    a refused key). Every other character is unchanged."""
    if value.isascii():
        return value
    return value.encode("utf-8", "backslashreplace").decode("utf-8")
