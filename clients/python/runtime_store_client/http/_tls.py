"""One TLS context per process for every store that brings no TLS settings of its own.

Making a context loads the system's certificates: over 100 ms of CPU each time, which a
service that makes a store per request, or a test suite that makes one per test, pays
again and again although every default context is the same."""

from __future__ import annotations

import functools
import ssl
from typing import Any

import httpx

#: ``httpx_args`` that shape the TLS context: given any, the caller's settings decide.
_TLS_ARGS = ("verify", "cert", "trust_env")


@functools.cache
def default_tls() -> ssl.SSLContext:
    """httpx's default context (certifi's certificates, or ``SSL_CERT_FILE``'s), made once."""
    return httpx.create_ssl_context()


def with_default_tls(httpx_args: dict[str, Any]) -> dict[str, Any]:
    """``httpx_args`` with ``verify`` set to the shared default context, unless they
    already say how to verify."""
    if any(name in httpx_args for name in _TLS_ARGS):
        return httpx_args
    return {**httpx_args, "verify": default_tls()}
