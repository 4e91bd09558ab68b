"""The media type of every request body, and the one answer to a body of another type.

CONTRACT.md section 8, "Browsers and open mode": every operation that takes a body requires
its declared media type, ``application/json`` (``NDJSON`` for a session import). A body sent
without a ``Content-Type``, or as ``text/plain`` or a form, is ``415 unsupported_media_type``:
those are the types a page on another origin may send without asking first (a "simple"
cross-site request: a form, ``sendBeacon``, a ``no-cors`` fetch), so no such request can write.

The JSON operations are checked where FastAPI leaves a body it did not read as JSON
(``app/api/problems.py``: it never validates against a schema); the import, which reads its
body as a stream, checks its own (``app/api/routes/transfer.py``).
"""

from __future__ import annotations

from typing import Final

from runtime_store_client import StoreError

JSON: Final = "application/json"
NDJSON: Final = "application/x-ndjson"


class UnsupportedMediaTypeError(StoreError):
    """A request body that is not of its operation's media type (HTTP only: the Python
    client always sends the right one, so it has no class for this code)."""

    default_code = "unsupported_media_type"
    default_status = 415


#: The problem code of a body of the wrong media type.
UNSUPPORTED_MEDIA_TYPE: Final = UnsupportedMediaTypeError.default_code


def essence(content_type: str) -> str:
    """``type/subtype`` of a ``Content-Type`` value, lower case, without its parameters."""
    return content_type.partition(";")[0].strip().lower()


def _accepts(accepted: str, media_type: str) -> bool:
    if accepted != JSON:
        return media_type == accepted
    # What FastAPI reads as JSON: application/json and the structured +json types (none of
    # them a type another origin may send without asking).
    main, _, sub = media_type.partition("/")
    return main == "application" and (sub == "json" or sub.endswith("+json"))


def refusal(
    content_type: str | None, accepted: str, *, has_body: bool = True
) -> UnsupportedMediaTypeError | None:
    """Why a body declared as ``content_type`` is refused by an operation that takes
    ``accepted``, or ``None`` when it is taken.

    No ``Content-Type`` is refused when a body came (``has_body``); a JSON operation sent
    nothing at all is left to validation ("body is missing").
    """
    if content_type is None:
        if not has_body:
            return None
        what = "a body without a content-type"
    else:
        media_type = essence(content_type)
        if _accepts(accepted, media_type):
            return None
        what = media_type or repr(content_type)
    return UnsupportedMediaTypeError(f"the request body must be {accepted}, not {what}")
