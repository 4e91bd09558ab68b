"""The schema: migrations and models agree, and the CLI applies and checks them."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from app.cli import cli
from app.settings import Settings
from app.storage import SqlStore
from app.storage.database.migrations import alembic_config, head_revision, upgrade_schema
from app.storage.database.tables import metadata
from app.storage.verify import verify_database
from tests.contract.builders import checkpoint, new_session, start_root, suspended_record


def test_migrations_at_head_match_the_table_models(engine: Engine) -> None:
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": True}
        )
        assert context.get_current_revision() == head_revision()
        assert compare_metadata(context, metadata) == []


def test_upgrade_to_0005_backfills_each_predecessors_first_successor(engine: Engine) -> None:
    """Runs continued before ``successor_run_id`` existed get it from their run_started."""
    store = SqlStore(engine)
    session_id = new_session(store).id
    predecessor = start_root(store, session_id).run
    store.record_run_suspension(predecessor.run_id, checkpoint(), suspended_record(predecessor))
    successor = start_root(store, session_id, predecessor_run_id=predecessor.run_id).run
    plain = start_root(store, session_id).run
    config = alembic_config(engine.url)
    engine.dispose()
    command.downgrade(config, "0004")
    command.upgrade(config, "head")
    assert store.load_run(predecessor.run_id).successor_run_id == successor.run_id
    assert store.load_run(successor.run_id).successor_run_id == ""
    assert store.load_run(plain.run_id).successor_run_id == ""
    assert verify_database(engine).ok


def test_db_check_fails_before_upgrade_and_passes_after(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    runner = CliRunner()

    before = runner.invoke(cli, ["db", "check", "--database-url", url])
    assert before.exit_code == 1
    assert "runtime-store db upgrade" in before.output

    upgrade = runner.invoke(cli, ["db", "upgrade", "--database-url", url])
    assert upgrade.exit_code == 0, upgrade.output

    after = runner.invoke(cli, ["db", "check", "--database-url", url])
    assert after.exit_code == 0, after.output
    assert head_revision() in after.output  # type: ignore[operator]


def test_db_upgrade_reads_the_database_url_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "from-env.db"
    monkeypatch.setenv("RUNTIME_STORE_DATABASE_URL", f"sqlite:///{path}")
    result = CliRunner().invoke(cli, ["db", "upgrade"])
    assert result.exit_code == 0, result.output
    tables = sa.inspect(sa.create_engine(f"sqlite:///{path}")).get_table_names()
    assert {"sessions", "runs", "run_records", "checkpoints", "run_tombstones"} <= set(tables)


def test_database_url_defaults_to_a_sqlite_file_in_the_working_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RUNTIME_STORE_DATABASE_URL", raising=False)
    assert Settings().database_url == "sqlite:///./runtime-store.db"


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_postgres_urls_mean_psycopg_3(scheme: str) -> None:
    settings = Settings(database_url=f"{scheme}://user:secret@db.example:5432/rs")
    assert settings.database_url == "postgresql+psycopg://user:secret@db.example:5432/rs"


def test_purge_in_batches_migration_drops_the_run_foreign_keys_and_downgrades(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'round-trip.db'}"

    def run_foreign_keys() -> set[str]:
        inspector = sa.inspect(sa.create_engine(url))
        return {
            f"{table}->{fk['referred_table']}"
            for table in ("run_records", "checkpoints")
            for fk in inspector.get_foreign_keys(table)
        }

    upgrade_schema(url)
    assert run_foreign_keys() == set()
    command.downgrade(alembic_config(url), "0003")
    assert run_foreign_keys() == {"run_records->runs", "checkpoints->runs"}
    upgrade_schema(url)
    assert run_foreign_keys() == set()
