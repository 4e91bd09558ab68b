"""The web console at ``/console``: server-rendered pages over the JSON API only.

The layer imports neither storage nor SQLAlchemy (``lint-imports``): every datum it shows
comes from an in-process call of the API, with the caller's token.
"""

from .routes import root_router, router

__all__ = ["root_router", "router"]
