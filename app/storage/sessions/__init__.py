"""Sessions (CONTRACT.md 3.1, 3.2): create, load, end, their runs, and purge."""
