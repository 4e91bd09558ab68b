"""The one spelling of a database URL that settings, the CLI and storage share.

Plain string work, so configuration need not import the storage layer to read a URL.

A PostgreSQL URL may name several hosts in libpq's multi-host form (CONTRACT.md 16):
``postgresql://u@h1:5432,h2:5432,h3:5432/db?target_session_attrs=read-write``. SQLAlchemy's
URL parser takes one host and port, so the canonical form moves the hosts into the query
as its psycopg dialect reads them (``?host=h1,h2,h3&port=5432,5432,5432``); psycopg then
tries them in order, like libpq. ``display_form`` writes it back as libpq's form, with the
password hidden.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import parse_qsl, quote, unquote, urlencode

_POSTGRES_SCHEMES: Final = ("postgres://", "postgresql://")
POSTGRES_DRIVER_SCHEME: Final = "postgresql+psycopg://"
_PSYCOPG_SCHEMES: Final = (*_POSTGRES_SCHEMES, POSTGRES_DRIVER_SCHEME)
#: One member of a host list: ``host``, ``host:port``, ``[v6]`` or ``[v6]:port``.
_MEMBER: Final = re.compile(r"^(?:\[(?P<v6>[^\]]*)\]|(?P<host>[^:\[\]]*))(?::(?P<port>\d*))?$")


class MultiHostError(ValueError):
    """A multi-host URL that cannot be read (a member that is no ``host[:port]``)."""


def canonical_database_url(url: str) -> str:
    """``postgres://`` and ``postgresql://`` mean psycopg 3, and a multi-host netloc becomes
    the ``host=``/``port=`` query SQLAlchemy's psycopg dialect reads; every other URL is
    kept as is."""
    for scheme in _POSTGRES_SCHEMES:
        if url.startswith(scheme):
            url = POSTGRES_DRIVER_SCHEME + url.removeprefix(scheme)
            break
    if url.startswith(POSTGRES_DRIVER_SCHEME):
        return _hosts_into_query(url)
    return url


def _split(url: str, scheme: str) -> tuple[str, str, str, str]:
    """``scheme://netloc/path?query``: (userinfo, hosts, path, query), each without its
    separator (``userinfo`` keeps no ``@``, ``path`` no ``/``)."""
    rest = url.removeprefix(scheme)
    rest, _, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    return (userinfo if at else ""), hosts, (path if slash else ""), query


def _join(scheme: str, userinfo: str, hosts: str, path: str, query: str) -> str:
    netloc = f"{userinfo}@{hosts}" if userinfo else hosts
    return f"{scheme}{netloc}/{path}" + (f"?{query}" if query else "")


def _hosts_into_query(url: str) -> str:
    userinfo, hosts, path, query = _split(url, POSTGRES_DRIVER_SCHEME)
    if "," not in hosts:
        return url
    names: list[str] = []
    ports: list[str] = []
    for member in hosts.split(","):
        match = _MEMBER.match(member)
        if match is None or not (match["v6"] or match["host"]):
            raise MultiHostError(
                f"the database URL's host list has a member {member!r} that is no host[:port]"
            )
        names.append(unquote(match["v6"] or match["host"]))
        ports.append(match["port"] or "")
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(key in ("host", "port") for key, _ in pairs):
        raise MultiHostError("the database URL names hosts both before the path and in its query")
    pairs += [("host", ",".join(names))]
    if any(ports):
        pairs += [("port", ",".join(ports))]
    return _join(POSTGRES_DRIVER_SCHEME, userinfo, "", path, urlencode(pairs, safe=",/:"))


def display_form(url: str) -> str:
    """A PostgreSQL URL as people write it, password hidden: the scheme the user gave
    (``postgresql+psycopg://`` stays), several hosts back in libpq's ``h1:p1,h2:p2`` form;
    any other URL unchanged (hide a SQLite or single-host password elsewhere)."""
    scheme = next((s for s in _PSYCOPG_SCHEMES if url.startswith(s)), None)
    if scheme is None:
        return url
    userinfo, hosts, path, query = _split(url, scheme)
    user, colon, _password = userinfo.partition(":")
    userinfo = f"{user}:***" if colon else user
    pairs = parse_qsl(query, keep_blank_values=True)
    given = dict(pairs)
    if not hosts and "," in given.get("host", ""):
        names = given["host"].split(",")
        ports = given.get("port", "").split(",") if "port" in given else [""] * len(names)
        if len(ports) == len(names):
            hosts = ",".join(
                (f"[{name}]" if ":" in name else quote(name, safe=""))
                + (f":{port}" if port else "")
                for name, port in zip(names, ports, strict=True)
            )
            pairs = [(key, value) for key, value in pairs if key not in ("host", "port")]
    return _join(scheme, userinfo, hosts, path, urlencode(pairs, safe=",/:"))
