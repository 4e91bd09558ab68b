"""Run records (CONTRACT.md 3.7, 4, 11.2, 12.3): the append and the insert every write
shares, batches, the two record lists, transcript reads and single records."""
