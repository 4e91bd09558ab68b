"""The memory store (CONTRACT.md section 9)."""
