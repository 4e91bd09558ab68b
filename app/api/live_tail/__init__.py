"""The live tail's machinery (CONTRACT.md 11.3); its endpoints are ``app/api/routes/tail.py``."""

from .reads import SharedReads
from .stream import TailSettings

__all__ = ["SharedReads", "TailSettings"]
