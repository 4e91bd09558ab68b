"""The API fixtures, shared with tests/api."""

from tests.api.conftest import api

__all__ = ["api"]
