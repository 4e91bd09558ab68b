"""The service's pure-ASGI middlewares, outermost first as ``app.main`` installs them.

``front`` (request ID, metrics, the access line, unexpected errors as problems, the
response headers), ``host_check`` (open mode: loopback ``Host`` only), ``offline_docs``
(the docs pages' bundle), ``positions`` (read replicas: the positions of writes, the
routing of reads), ``exact_path`` (routing on the raw path), ``body_limit`` (body size),
then ``app.api.store_calls.CancelOnDisconnect`` and ``body_depth`` (JSON depth).
"""
