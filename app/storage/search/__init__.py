"""Finding sessions and runs (CONTRACT.md 11.1) and the lists' counts (11.5)."""
