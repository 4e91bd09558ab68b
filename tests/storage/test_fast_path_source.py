"""The fast path's SQL is contained: one source file per function, frozen by migrations.

Each function's source is its ``.sql`` file in ``app/storage/fast_path``; the latest
migration that (re)defines it carries an identical copy; a migrated database holds exactly
that function (one, no stale overload); the store calls it with every parameter by name;
and every literal it compares with is a value of the Python enum that owns the word.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.state import SessionRowStatus
from app.storage.fast_path import FUNCTIONS, Outcome, SqlFunction
from runtime_store_client import RunStartOutcome, RunStatus, SessionStatus

VERSIONS = Path(__file__).resolve().parents[2] / "alembic" / "versions"
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


def _latest_copy(name: str) -> tuple[str, str]:
    """(revision, source) of the last migration whose ``FUNCTIONS`` defines ``name``."""
    found = [
        (module.revision, module.FUNCTIONS[name])
        for module in _migrations()
        if name in getattr(module, "FUNCTIONS", {})
    ]
    assert found, f"no migration freezes {name}"
    return found[-1]


def _signature(source: str, name: str) -> str:
    match = re.search(rf"FUNCTION {name}\((.*?)\)\s*LANGUAGE", source, re.S)
    assert match is not None, f"no signature of {name}"
    return " ".join(match.group(1).split())


def _body(source: str) -> str:
    first, last = source.index("$$"), source.rindex("$$")
    return source[first + 2 : last]


@pytest.mark.parametrize("function", FUNCTIONS, ids=NAMES)
def test_each_function_file_equals_the_latest_migrations_copy(function: SqlFunction) -> None:
    revision, frozen = _latest_copy(function.name)
    assert frozen == function.source(), (
        f"{function.name}.sql changed after migration {revision} froze it: add a migration "
        "that carries the new source"
    )


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
