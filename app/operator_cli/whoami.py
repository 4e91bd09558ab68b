"""``runtime-store whoami``: whose token the service sees, its role and what it may do."""

from __future__ import annotations

import json
import sys

import typer

from .common import DEFAULT_URL, AsJson, Token, Url, _service


def whoami(url: Url = DEFAULT_URL, token: Token = None, as_json: AsJson = False) -> None:
    """The token's name, role and permissions as the service sees them, or its open mode."""
    with _service(url, token) as store:
        found = store.whoami()
    if as_json:
        sys.stdout.write(
            json.dumps(
                {
                    "mode": found.mode,
                    "name": found.name,
                    "role": found.role,
                    "permissions": list(found.permissions),
                }
            )
            + "\n"
        )
    elif found.is_open:
        typer.echo("open mode: no token needed (anyone may read, write and administer)")
    else:
        typer.echo(f"{found.name} ({found.role}: {', '.join(found.permissions)})")
