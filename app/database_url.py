"""The one spelling of a database URL that settings, the CLI and storage share.

Plain string work, so configuration need not import the storage layer to read a URL.
"""

from __future__ import annotations

from typing import Final

_POSTGRES_SCHEMES: Final = ("postgres://", "postgresql://")
POSTGRES_DRIVER_SCHEME: Final = "postgresql+psycopg://"


def canonical_database_url(url: str) -> str:
    """``postgres://`` and ``postgresql://`` mean psycopg 3; every other URL is kept as is."""
    for scheme in _POSTGRES_SCHEMES:
        if url.startswith(scheme):
            return POSTGRES_DRIVER_SCHEME + url.removeprefix(scheme)
    return url
