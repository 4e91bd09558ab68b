"""The fast path's SQL: each function's every version, one ``.sql`` file each.

``sql/<function>/<revision>.sql`` is the function's source as the migration ``<revision>``
created it; the migration executes that file by name (``source(name, revision)``), and
the highest revision is the function as a database at head holds it. A version, once a
migration ran it, is never edited: a change is a new file and a new migration
(``tests/storage/test_fast_path_source.py`` holds each version to its digest in
``sql/SHA256SUMS``).
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable

SQL = resources.files(__package__).joinpath("sql")


def _folder(name: str) -> Traversable:
    folder = SQL.joinpath(name)
    if not folder.is_dir():
        raise LookupError(f"no fast-path function {name!r}")
    return folder


def revisions(name: str) -> list[str]:
    """The revisions that (re)created the function ``name``, oldest first."""
    return sorted(
        entry.name.removesuffix(".sql")
        for entry in _folder(name).iterdir()
        if entry.name.endswith(".sql")
    )


def source(name: str, revision: str | None = None) -> str:
    """The function's source as migration ``revision`` created it (``None``: the latest)."""
    chosen = revision or revisions(name)[-1]
    path = _folder(name).joinpath(f"{chosen}.sql")
    if not path.is_file():
        raise LookupError(f"migration {chosen} did not create {name}")
    return path.read_text("utf-8")
