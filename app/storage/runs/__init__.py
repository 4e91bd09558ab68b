"""A run after its start (CONTRACT.md 3.8-3.12): reading it, and its lifecycle changes."""
