"""``X-Content-Type-Options: nosniff`` on every response (CONTRACT.md section 8).

A browser then takes every response as the type it declares: a problem, a JSON body that
quotes a caller's text or an NDJSON export is never run as a script or shown as a page.
``front.Front`` adds it where a response lacks it (the console's already say so). The
problems the connection writes itself (``app/serving``: 400, 408, 503), which never pass
through a middleware, carry it from ``problem_response``.
"""

from __future__ import annotations

from typing import Final

NOSNIFF_NAME: Final = "X-Content-Type-Options"
NOSNIFF_VALUE: Final = "nosniff"
NAME_BYTES: Final = NOSNIFF_NAME.lower().encode()
HEADER: Final = (NAME_BYTES, NOSNIFF_VALUE.encode())
