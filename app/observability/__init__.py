"""Observability: Prometheus metrics, structured logs with request IDs, optional traces.

* ``metrics``: the metric families (correct across ``serve``'s workers through
  prometheus-client's multiprocess mode) and the ``/metrics`` text.
* ``logs``: the JSON and text formatters and the logging configuration ``serve`` gives
  uvicorn, so that every line of the service has one format and carries its request ID.
* ``requests``: request metrics and the access line, called by the API's outermost layer.
* ``context``: what one request in flight has told so far (its ID, its store outcomes).
* ``pool``: database pool gauges from SQLAlchemy's pool events.
* ``tracing``: OpenTelemetry, only when the ``OTEL_*`` variables ask for it.
* ``setup``: what ``create_app`` switches on from its settings.

Nothing here imports the API, the app or the CLI (an import-linter contract): the storage
layer counts its retries and purged rows through ``metrics``.
"""
