"""Issue 45, part 3: a setting given wrongly is one line on stderr naming it (its
environment variable) and what to do, a URL's password shown as ``***``, exit 2, never a
traceback, and nothing done before (no migration, no banner). Each case runs the real
command in a subprocess; the line's parts are checked in this process too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from app.settings import Settings, database_url_problem, invalid_settings, mask_secrets
from tests.conftest import free_port

#: In every URL of these cases: it must never be printed.
SECRET = "s3cr3t"
PRIMARY = f"postgresql://u:{SECRET}@db.invalid:5432/rs"
REPLICA = f"postgresql://u:{SECRET}@db2.invalid/rs"


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``runtime-store ARGS`` with only these ``RUNTIME_STORE_*`` variables set."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("RUNTIME_STORE_")}
    repo = Path(__file__).resolve().parent.parent
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env={**inherited, "PYTHONPATH": str(repo), **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The refusal's only line, after checking it leaks nothing and nothing else was said."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert done.stdout == ""  # no banner, nothing migrated
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


SERVE_CASES = [
    pytest.param(
        {"RUNTIME_STORE_READ_DATABASE_URLS": REPLICA},
        (
            "error: RUNTIME_STORE_READ_DATABASE_URLS=postgresql://u:***@db2.invalid/rs is "
            "not valid: read replicas are streaming replicas of a PostgreSQL primary",
            "unset RUNTIME_STORE_READ_DATABASE_URLS, or point RUNTIME_STORE_DATABASE_URL at",
        ),
        id="replicas-on-sqlite",
    ),
    pytest.param(
        {"RUNTIME_STORE_REPLICA_MAX_LAG_SECONDS": "0"},
        (
            "error: RUNTIME_STORE_REPLICA_MAX_LAG_SECONDS=0 is not valid: it should be "
            "greater than 0; set a larger number, or unset it for the default (1)",
        ),
        id="lag-zero",
    ),
    pytest.param(
        {
            "RUNTIME_STORE_DATABASE_URL": PRIMARY,
            "RUNTIME_STORE_READ_DATABASE_URLS": f"{REPLICA},mysql://u:{SECRET}@db3/rs",
        },
        (
            "RUNTIME_STORE_READ_DATABASE_URLS=",
            "mysql://u:***@db3/rs: runtime-store speaks SQLite and PostgreSQL, not mysql://",
            "name each as postgresql://",
        ),
        id="replica-not-postgres",
    ),
    pytest.param(
        {"RUNTIME_STORE_DATABASE_URL": f"postgresql://u:{SECRET}@db.invalid:99999/rs"},
        (
            "error: RUNTIME_STORE_DATABASE_URL=postgresql://u:***@db.invalid:99999/rs is not "
            "valid: its port '99999' is not a number from 1 to 65535: use sqlite:///PATH or "
            "postgresql://",
        ),
        id="port-out-of-range",
    ),
    pytest.param(
        {"RUNTIME_STORE_DATABASE_URL": f"u:{SECRET}@db.invalid/rs"},
        (
            "error: RUNTIME_STORE_DATABASE_URL=u:***@db.invalid/rs is not valid: it is not a "
            "database URL",
        ),
        id="no-scheme",
    ),
    pytest.param(
        {"RUNTIME_STORE_DB_POOL_SIZE": "ten"},
        (
            "error: RUNTIME_STORE_DB_POOL_SIZE=ten is not valid:",
            "set a whole number, or unset it for the default (10)",
        ),
        id="not-a-number",
    ),
    pytest.param(
        {"RUNTIME_STORE_PG_FAST_PATH": "maybe"},
        ("error: RUNTIME_STORE_PG_FAST_PATH=maybe is not valid:", "set on or off"),
        id="not-a-switch",
    ),
    pytest.param(
        {"RUNTIME_STORE_WEBHOOK_DELIVERY_RETENTION": "0s"},
        (
            "error: RUNTIME_STORE_WEBHOOK_DELIVERY_RETENTION=0s is not valid: '0s' must be "
            "longer than zero; correct it, or unset it for the default (3d)",
        ),
        id="duration",
    ),
    pytest.param(
        {
            "RUNTIME_STORE_REPLICA_MAX_LAG_SECONDS": "-1",
            "RUNTIME_STORE_DATABASE_URL": f"sqlite:///x.db?password={SECRET}",
            "RUNTIME_STORE_READ_DATABASE_URLS": REPLICA,
        },
        (
            "error: 2 settings are not valid: RUNTIME_STORE_READ_DATABASE_URLS=",
            " | RUNTIME_STORE_REPLICA_MAX_LAG_SECONDS=-1 is not valid",
            "RUNTIME_STORE_DATABASE_URL is sqlite:///x.db?password=***",
        ),
        id="two-at-once",
    ),
    # serve's own options, read from their variables by the command line.
    pytest.param(
        {"RUNTIME_STORE_PORT": "eighty"},
        (
            "error: RUNTIME_STORE_PORT=eighty is not valid (",
            "serve --port): it should be a valid integer",
            "unset it for the default (8000)",
        ),
        id="serve-option",
    ),
    pytest.param(
        {"RUNTIME_STORE_LOG_FORMAT": "xml"},
        (
            "error: RUNTIME_STORE_LOG_FORMAT=xml is not valid (",
            "serve --log-format): 'xml' is not one of 'json', 'text'; correct it, or unset it",
        ),
        id="serve-choice",
    ),
    pytest.param(
        {"RUNTIME_STORE_RETENTION_INTERVAL": "hourly"},
        (
            "error: --retention-interval (RUNTIME_STORE_RETENTION_INTERVAL) is not valid: "
            "'hourly' is not a duration such as 30d, 12h, 15m or 90s; correct it, or unset it",
        ),
        id="serve-duration",
    ),
    pytest.param(
        {"RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN": f"rst_{SECRET}"},
        (
            "refusing to serve: RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN is set but "
            "RUNTIME_STORE_TOKEN_KEY is not: set the key too",
        ),
        id="bootstrap-without-key",
    ),
]


@pytest.mark.parametrize(("env", "says"), SERVE_CASES)
def test_serve_refuses_a_wrong_setting_in_one_line_without_its_secret(
    env: dict[str, str], says: tuple[str, ...], tmp_path: Path
) -> None:
    database = tmp_path / "never.db"
    env = {"RUNTIME_STORE_DATABASE_URL": f"sqlite:///{database}", **env}
    args = ["serve"] if "RUNTIME_STORE_PORT" in env else ["serve", "--port", str(free_port())]
    line = one_line(run(args, env, tmp_path))
    for part in says:
        assert part in line, line
    assert not database.exists()  # nothing was migrated


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (
            ["tokens", "list"],
            {"RUNTIME_STORE_DATABASE_URL": f"postgresql://u:{SECRET}@db.invalid:0/rs"},
            "error: RUNTIME_STORE_DATABASE_URL=postgresql://u:***@db.invalid:0/rs is not valid: "
            "its port '0'",
        ),
        (
            ["retention", "run", "--dry-run"],
            {"RUNTIME_STORE_DB_POOL_SIZE": "0", "RUNTIME_STORE_RETENTION_ENDED_SESSIONS": "30d"},
            "error: RUNTIME_STORE_DB_POOL_SIZE=0 is not valid: it should be greater than 0",
        ),
        (
            ["db", "check"],
            {"RUNTIME_STORE_DATABASE_URL": f"db.invalid:5432/rs?password={SECRET}"},
            "error: RUNTIME_STORE_DATABASE_URL=db.invalid:5432/rs?password=*** is not valid: it "
            "is not a database URL",
        ),
        (
            ["db", "upgrade", "--database-url", f"mysql://u:{SECRET}@db.invalid/rs"],
            {},
            "error: --database-url=mysql://u:***@db.invalid/rs is not valid: runtime-store "
            "speaks SQLite and PostgreSQL, not mysql://",
        ),
    ],
    ids=["tokens", "retention", "db-check", "db-upgrade-option"],
)
def test_the_other_commands_refuse_a_wrong_setting_in_one_line(
    args: list[str], env: dict[str, str], says: str, tmp_path: Path
) -> None:
    line = one_line(run(args, env, tmp_path))
    assert line.startswith(says), line
    assert list(tmp_path.iterdir()) == []  # no SQLite file made by accident


# --- the parts of the line, in this process ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql://u:s3cr3t@db/rs", "postgresql://u:***@db/rs"),
        ("postgres://u:pa/ss?@db:5432/rs", "postgres://u:***@db:5432/rs"),
        (
            "postgresql://db/rs?sslmode=require&password=s3cr3t",
            "postgresql://db/rs?sslmode=require&password=***",
        ),
        (
            "postgresql://a:s3cr3t@h1/d,postgresql://b:s3cr3t@h2/d",
            "postgresql://a:***@h1/d,postgresql://b:***@h2/d",
        ),
        ("u:s3cr3t@db/rs", "u:***@db/rs"),
        ("postgresql://u@db:5432/rs", "postgresql://u@db:5432/rs"),
        ("sqlite:///./runtime-store.db", "sqlite:///./runtime-store.db"),
    ],
)
def test_a_urls_password_is_masked(text: str, shown: str) -> None:
    assert mask_secrets(text) == shown


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("sqlite://", None),
        ("sqlite:////var/lib/rs.db", None),
        ("postgres://u:p@db/rs", None),
        ("postgresql+psycopg://u@[::1]:5432/rs", None),
        ("postgresql://u@h1:5432,h2:5433/rs?target_session_attrs=read-write", None),
        ("postgresql://u@/rs?host=/run/postgresql", None),
        ("runtime-store.db", "it is not a database URL (no scheme://)"),
        ("mysql://u@db/rs", "runtime-store speaks SQLite and PostgreSQL, not mysql://"),
        ("postgresql://u@db:5432x/rs", "its port '5432x' is not a number from 1 to 65535"),
        ("postgresql://u@h1:5432,h2:70000/rs", "its port '70000' is not a number from 1 to 65535"),
    ],
)
def test_database_url_problems(url: str, problem: str | None) -> None:
    assert database_url_problem(url) == problem


def test_a_secret_settings_value_is_never_shown() -> None:
    given: dict[str, Any] = {"token_key": 31337, "max_streams": 0, "tail_heartbeat_seconds": 60}
    with pytest.raises(ValidationError) as caught:
        Settings(**given)
    line = invalid_settings(caught.value)
    assert line is not None
    assert "31337" not in line
    assert line.startswith(
        "3 settings are not valid: RUNTIME_STORE_TOKEN_KEY (its value not shown) is not valid: "
        "it should be a valid string; correct it, or unset it | RUNTIME_STORE_MAX_STREAMS=0 "
    )
    assert line.endswith(
        " | RUNTIME_STORE_TAIL_HEARTBEAT_SECONDS=60 is not valid: it should be less than or "
        "equal to 15; set a smaller number, or unset it for the default (15)"
    )
    assert invalid_settings(ValueError("not about settings")) is None
