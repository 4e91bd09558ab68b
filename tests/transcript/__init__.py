"""Transcript tools of the Python client (CONTRACT.md section 10)."""
