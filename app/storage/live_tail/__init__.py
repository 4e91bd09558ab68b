"""The live tail's wake-ups (CONTRACT.md 11.3): which runs and sessions just got records,
heard from the database (PostgreSQL NOTIFY) or from the store's own commits (SQLite)."""
