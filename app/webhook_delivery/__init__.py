"""Webhook deliveries sent (CONTRACT.md 13.3): the dispatcher of each service worker
(``dispatcher.py``: claims, leases, outcomes, pruning) and one attempt (``sending.py``:
the deadline, the address checks at the moment of sending)."""
