"""Request and response bodies of the HTTP API, separate from the tables, a module per
context of the contract: ``sessions``, ``starts``, ``runs``, ``records``, ``memory``,
``seeds``, ``transcripts``, ``webhooks``, ``whoami``; ``wire_model`` holds the base they
share. Each model converts to and from the contract dataclasses of ``runtime_store_client``."""
