"""The runtime-store benchmark: ``python -m bench`` (see docs/performance.md)."""
