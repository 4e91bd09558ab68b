"""Access: bearer token digests (CONTRACT.md 8) and the keys the service keeps in its
database (the token key and the cursor key every replica shares)."""
