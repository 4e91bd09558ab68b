"""Moving a session out and back in (CONTRACT.md 11.4): its file format (``format``),
export, and import (``importer``: read, replay, and write through a sink)."""

from app.storage.transfer.export import export_session
from app.storage.transfer.format import FORMAT, encode_line
from app.storage.transfer.importer import import_session

__all__ = ["FORMAT", "encode_line", "export_session", "import_session"]
