"""The HTTP implementations of the contract protocols."""

from .aio import AsyncHttpStore
from .sync import HttpStore

__all__ = ["AsyncHttpStore", "HttpStore"]
