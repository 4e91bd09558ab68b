"""The API fixtures, shared with tests/api."""

from tests.api.conftest import api, shared_apps

__all__ = ["api", "shared_apps"]
