"""Webhooks (CONTRACT.md 13): subscriptions, deliveries and the dispatcher's queue. The
events themselves are written by each state change's transaction (unit_of_work/outbox.py)."""
