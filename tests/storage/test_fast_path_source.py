"""The fast path's SQL is spelled once: one versioned file per function version.

Each version of a function is ``app/storage/fast_path/sql/<name>/<revision>.sql``, which
the migration ``<revision>`` executes by name; a version is never edited once a migration
ran it (``SHA256SUMS`` holds each digest); a migrated database holds exactly the latest
version (one function, no stale overload); the store calls it with every parameter by
name; and every literal it compares with is a value of the Python enum that owns the word.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.state import SessionRowStatus
from app.storage.fast_path import FUNCTIONS, Outcome, SqlFunction, sources
from runtime_store_client import RunStartOutcome, RunStatus, SessionStatus

VERSIONS = Path(__file__).resolve().parents[2] / "alembic" / "versions"
SQL = Path(sources.__file__).with_name("sql")
NAMES = [function.name for function in FUNCTIONS]


def _migrations() -> list[ModuleType]:
    modules = []
    for path in sorted(VERSIONS.glob("[0-9]*.py")):
        spec = importlib.util.spec_from_file_location(f"revision_{path.stem}", path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules.append(module)
    return modules


def _executed_versions() -> set[tuple[str, str]]:
    """(function, revision) of every version a migration executes by name."""
    executed: set[tuple[str, str]] = set()
    for path in sorted(VERSIONS.glob("[0-9]*.py")):
        text = path.read_text("utf-8")
        revision = path.stem.split("_", 1)[0]
        module = next(m for m in _migrations() if m.revision == revision)
        for name, chosen in re.findall(r'source\(\s*"(\w+)",\s*(\w+|"\d+")\s*\)', text):
            executed.add((name, _revision_named(module, chosen)))
        for name in getattr(module, "FUNCTIONS", ()):
            executed.add((name, revision))
    return executed


def _revision_named(module: ModuleType, chosen: str) -> str:
    if chosen.startswith('"'):
        return chosen.strip('"')
    value = getattr(module, chosen)
    assert isinstance(value, str)
    return value


def test_every_version_a_migration_runs_is_a_file_and_every_file_is_run() -> None:
    files = {(path.parent.name, path.stem) for path in SQL.glob("*/*.sql")}
    assert _executed_versions() == files


def test_no_version_changes_after_a_migration_ran_it() -> None:
    pinned = {}
    for line in (SQL / "SHA256SUMS").read_text("utf-8").splitlines():
        digest, name = line.split()
        pinned[name] = digest
    files = {
        str(path.relative_to(SQL)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in SQL.glob("*/*.sql")
    }
    assert files == pinned, "a version was edited: add a new version and a migration instead"


@pytest.mark.parametrize("function", FUNCTIONS, ids=NAMES)
def test_the_store_calls_the_latest_version_a_migration_created(function: SqlFunction) -> None:
    latest = max(revision for name, revision in _executed_versions() if name == function.name)
    assert sources.revisions(function.name)[-1] == latest
    assert function.source() == sources.source(function.name, latest)


def _signature(source: str, name: str) -> str:
    match = re.search(rf"FUNCTION {name}\((.*?)\)\s*LANGUAGE", source, re.S)
    assert match is not None, f"no signature of {name}"
    return " ".join(match.group(1).split())


def _body(source: str) -> str:
    first, last = source.index("$$"), source.rindex("$$")
    return source[first + 2 : last]


@pytest.mark.parametrize("function", FUNCTIONS, ids=NAMES)
def test_each_migrated_function_is_its_file(postgres_engine: Engine, function: SqlFunction) -> None:
    with postgres_engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT prosrc, pg_get_function_arguments(oid) AS arguments FROM pg_proc "
                "WHERE proname = :name"
            ),
            {"name": function.name},
        ).all()
    assert len(rows) == 1, f"{function.name}: {len(rows)} functions of that name in the database"
    source = function.source()
    assert rows[0].prosrc == _body(source)
    assert " ".join(rows[0].arguments.split()) == _signature(source, function.name)


@pytest.mark.parametrize("function", FUNCTIONS, ids=NAMES)
def test_the_store_passes_every_parameter_by_name_with_its_type(function: SqlFunction) -> None:
    parameters = [
        tuple(part.split(" ", 1))
        for part in _signature(function.source(), function.name).split(", ")
        if not part.startswith("OUT ")
    ]
    outputs = [
        part.split(" ")[1]
        for part in _signature(function.source(), function.name).split(", ")
        if part.startswith("OUT ")
    ]
    assert [(f"p_{name}", sql_type) for name, sql_type in function.inputs] == parameters
    assert list(function.outputs) == outputs


def test_outcomes_spelled_in_sql_are_the_python_outcomes() -> None:
    spelled = {
        word
        for function in FUNCTIONS
        for word in re.findall(r"outcome := '(\w+)'", function.source())
    }
    assert spelled == {outcome.value for outcome in Outcome}


def test_every_word_the_sql_compares_with_belongs_to_a_contract_enum() -> None:
    words = {
        *RunStatus,
        *SessionStatus,
        *SessionRowStatus,
        *RunStartOutcome,
        *Outcome,
        "",  # an empty cancellation reason: none stored
    }
    for function in FUNCTIONS:
        code = re.sub(r"--[^\n]*", "", _body(function.source()))
        literals = set(re.findall(r"'([^']*)'", code))
        assert literals <= {str(word) for word in words}, (function.name, literals)
