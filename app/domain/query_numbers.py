"""Numbers in a query string (CONTRACT.md 13.4: ``timeout`` is "a number"): JSON number
syntax only, whatever more the parser of the parameter's type would take.

Python's ``int`` and ``float`` (and so pydantic's lax parsing) also read ``1_0`` as 10,
``+1``, `` 1 ``, ``01``, ``1.``, ``.5``, ``inf`` and ``nan``: a query that another
implementation of the contract refuses. The API refuses them first
(``app/api/deps.py``: ``JsonInteger``, ``JsonFloat``); the type's own parser then reads
what is left (an integer parameter still refuses ``1.5`` and ``1e2``).
"""

from __future__ import annotations

import re
from typing import Final

#: RFC 8259 section 6: ``-? int frac? exp?``, no leading zero, no sign but a leading minus.
_JSON_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def is_json_number(text: str) -> bool:
    """Whether ``text`` is exactly one JSON number (ASCII digits, no spaces)."""
    return _JSON_NUMBER.fullmatch(text) is not None
