"""The HTTP implementations of the contract protocols."""

from ._tail import AsyncRecordTail, RecordTail
from .aio import AsyncHttpStore
from .sync import HttpStore

__all__ = ["AsyncHttpStore", "AsyncRecordTail", "HttpStore", "RecordTail"]
