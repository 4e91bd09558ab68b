"""The unit of work: one transaction per operation and its retries, what an operation sees
of it (``Tx``), and what every transaction may write besides its rows: the webhook outbox
(CONTRACT.md 13.2) and the check against an import's held IDs (11.4)."""
