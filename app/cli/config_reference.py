"""``runtime-store config-reference``: docs/configuration.md, generated from the settings.

Every ``RUNTIME_STORE_*`` variable a user may set is in it, from two places only: the
fields of ``Settings`` (app/settings.py; each names its group) and the command line's
options that read a variable (``serve --port`` from ``RUNTIME_STORE_PORT``, the operator
commands' ``--url`` and ``--token``), found by walking the command tree. Nothing is listed
by hand but the groups' titles and introductions, the group of each option, and the
variables of the tests and benchmarks (``NOT_SETTINGS``, each with why it is no setting).
tests/docs/test_configuration_reference.py fails when the committed file drifts.

``serve`` warns about a ``RUNTIME_STORE_*`` variable that is none of these
(``unknown_variable_warnings``), naming the closest known one.
"""

from __future__ import annotations

import difflib
import enum
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Final

import typer

from .common import cli

PREFIX: Final = "RUNTIME_STORE_"
REGENERATE: Final = "runtime-store config-reference --output docs/configuration.md"

#: Each group of the reference: its title and what a reader should know first. The keys are
#: app/settings.py's ``GROUPS`` (a test holds them equal).
GROUP_TEXT: Final[dict[str, tuple[str, str]]] = {
    "database": (
        "Database",
        "Where the service keeps everything, and how it talks to the database.",
    ),
    "replicas": (
        "Read replicas",
        "PostgreSQL only: hot standbys that take reads off the primary (docs/scaling.md).",
    ),
    "http": (
        "HTTP serving",
        "How `runtime-store serve` listens and bounds its connections (docs/reliability.md). "
        "Each worker process applies the bounds on its own. `serve` also sets "
        "`MALLOC_ARENA_MAX=2` for itself and its workers unless it is set (glibc's malloc "
        "arenas: memory freed by the database threads is reused instead of kept per thread).",
    ),
    "auth": (
        "Authentication and tokens",
        "Tokens are required exactly when `RUNTIME_STORE_TOKEN_KEY` is set; `serve` checks "
        "the setup before it starts (docs/operations.md).",
    ),
    "limits": (
        "Limits",
        "Bounds on what one request may send or read. JSON depth is a fixed contract bound, "
        "not a setting (docs/contract.md 2.8).",
    ),
    "tail": (
        "Live tail",
        "The live record streams (`GET …/records/stream`, `runtime-store runs tail`).",
    ),
    "webhooks": (
        "Webhooks",
        "Subscriptions and their deliveries (docs/contract.md 13).",
    ),
    "retention": (
        "Retention",
        "What is deleted when, by `serve` (`RUNTIME_STORE_RETENTION_INTERVAL`) or by "
        "`runtime-store retention run`. Ages are durations such as `30d`, `12h`, `15m`, "
        "`90s`; every age is unset (keep forever) unless set.",
    ),
    "seeds": (
        "Run seeds",
        "Starting a run from a published seed (docs/contract.md 15).",
    ),
    "observability": (
        "Observability",
        "Logs, metrics and traces (docs/operations.md). Traces are off unless the `otel` extra is "
        "installed and the standard `OTEL_*` variables name an exporter "
        "(`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_ENDPOINT`); the OpenTelemetry SDK reads "
        "the rest of them itself.",
    ),
    "operator": (
        "Operator commands",
        "Read by the commands that talk to a running service (`sessions`, `runs`, "
        "`webhooks`, `whoami`), not by the service.",
    ),
}

#: The group of each variable read by a command-line option and by no setting.
OPTION_GROUPS: Final[dict[str, str]] = {
    "RUNTIME_STORE_HOST": "http",
    "RUNTIME_STORE_PORT": "http",
    "RUNTIME_STORE_WORKERS": "http",
    "RUNTIME_STORE_NO_MIGRATE": "database",
    "RUNTIME_STORE_INSECURE": "auth",
    "RUNTIME_STORE_LOG_FORMAT": "observability",
    "RUNTIME_STORE_LOG_LEVEL": "observability",
    "RUNTIME_STORE_URL": "operator",
    "RUNTIME_STORE_TOKEN": "operator",
}

#: Groups whose variables read by options alone come first (``serve --host``, ``--port``).
OPTIONS_FIRST: Final = ("http",)

#: ``RUNTIME_STORE_*`` variables that are no setting of the service, and why: the test
#: suite's and the benchmarks' own. Not in the reference; ``serve`` does not warn of them.
NOT_SETTINGS: Final[dict[str, str]] = {
    "RUNTIME_STORE_TEST_POSTGRES_URL": "the PostgreSQL server the test suite uses",
    "RUNTIME_STORE_REQUIRE_POSTGRES": "makes the tests fail, not skip, without PostgreSQL",
    "RUNTIME_STORE_ALLOW_NO_BROWSER": "lets the browser tests skip without Chromium",
    "RUNTIME_STORE_DOCKER_TESTS": "runs the tests that build the Docker image",
    "RUNTIME_STORE_DIFFERENTIAL_EXAMPLES": "examples of the fast-path differential test",
    "RUNTIME_STORE_RELIABILITY_SEED": "the seed of the reliability load test",
    "RUNTIME_STORE_BENCH_POSTGRES_URL": "the PostgreSQL server of the benchmarks (bench/)",
    "RUNTIME_STORE_TEST_WORKER_START_DELAY": "tests: a serve worker sleeps before it starts",
    "RUNTIME_STORE_TEST_WORKER_START_EXIT": "tests: a serve worker exits before it starts",
}


@dataclass
class Variable:
    """One row of the reference."""

    name: str
    group: str
    value: str
    default: str
    meaning: str
    options: list[str] = field(default_factory=list)  # the options that read it too


# --- the settings ---------------------------------------------------------------------


def _bounds(metadata: list[Any]) -> str:
    """`` > 0``, `` ≤ 15``: a setting's numeric bounds, as annotated_types give them."""
    said = []
    for item in metadata:
        for attribute, sign in (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤")):
            bound = getattr(item, attribute, None)
            if bound is not None and not isinstance(bound, timedelta):
                said.append(f"{sign} {bound:g}" if isinstance(bound, float) else f"{sign} {bound}")
    return (" " + ", ".join(said)) if said else ""


def _setting_value(name: str, annotation: Any, metadata: list[Any]) -> str:
    text = str(annotation)
    if "SecretStr" in text:
        return "secret"
    if annotation is bool:
        return "on or off"
    if annotation is int:
        return "whole number" + _bounds(metadata)
    if annotation is float:
        return "number" + _bounds(metadata)
    if "timedelta" in text:
        return "duration"
    if "list[" in text:
        return "comma-separated list"
    if "Path" in text:
        return "directory"
    return "URL" if name.endswith("url") else "text"


def _mebibytes(value: int) -> str:
    mib = 1024 * 1024
    if value >= mib and value % mib == 0:
        count = value // mib
        unit = f"{count // 1024} GiB" if count % 1024 == 0 else f"{count} MiB"
        return f"`{value}` ({unit})"
    return f"`{value}`"


def _setting_default(value: Any) -> str:
    from app.domain.durations import format_duration

    if value is None or value == []:
        return "unset"
    if isinstance(value, bool):
        return "`on`" if value else "`off`"
    if isinstance(value, timedelta):
        return f"`{format_duration(value)}`"
    if isinstance(value, float):
        return f"`{value:g}`"
    if isinstance(value, int):
        return _mebibytes(value)
    return f"`{value}`"


def _settings() -> Iterator[Variable]:
    from app.settings import Settings, env_name, setting_group

    for name, info in Settings.model_fields.items():
        secret = "SecretStr" in str(info.annotation)
        default = info.get_default(call_default_factory=True)
        yield Variable(
            name=env_name(name),
            group=setting_group(name),
            value=_setting_value(name, info.annotation, info.metadata),
            default="unset" if secret else _setting_default(default),
            meaning=info.description or "",
        )


# --- the command line's options ---------------------------------------------------------


@dataclass
class _Option:
    command: str
    option: str
    envvar: str
    param: Any


def _options() -> list[_Option]:
    """Every option of the command tree that reads an environment variable."""
    found: list[_Option] = []

    def walk(command: Any, path: list[str]) -> None:
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, [*path, name])
        for param in getattr(command, "params", ()):
            names = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or ())
            for envvar in names:
                flags = "/".join([*param.opts, *param.secondary_opts])
                found.append(_Option(" ".join(path), flags, envvar, param))

    walk(typer.main.get_command(cli), [])
    return found


def _option_value(param: Any) -> str:
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if getattr(param, "is_flag", False) or annotation is bool:
        return "on or off"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(f"`{member.value}`" for member in annotation)
    if annotation is int:
        low = getattr(param, "min", None)
        return "whole number" + (f" ≥ {low}" if low is not None else "")
    return "URL" if param.name == "url" else "text"


def _option_default(param: Any) -> str:
    value = param.default
    if isinstance(value, enum.Enum):
        value = value.value
    return _setting_default(value)


def _commands(options: list[_Option]) -> str:
    """``serve --port``; ``--url`` of ``sessions``, ``runs``, … when many commands read it."""
    flags = sorted({option.option for option in options})
    tops = sorted({option.command.split()[0] for option in options})
    if len(options) == 1:
        return f"`{options[0].command} {options[0].option}`"
    return f"`{'`, `'.join(flags)}` of `{'`, `'.join(tops)}`"


def variables() -> list[Variable]:
    """Every variable of the reference, in the groups' order."""
    from app.settings import GROUPS

    rows = {row.name: row for row in _settings()}
    by_variable: dict[str, list[_Option]] = {}
    for option in _options():
        by_variable.setdefault(option.envvar, []).append(option)
    for envvar, options in by_variable.items():
        if envvar in rows:
            rows[envvar].options.append(_commands(options))
            rows[envvar].meaning += f" Also {_commands(options)}."
            continue
        if envvar not in OPTION_GROUPS:
            raise LookupError(f"{envvar} ({_commands(options)}) has no group in OPTION_GROUPS")
        param = options[0].param
        rows[envvar] = Variable(
            name=envvar,
            group=OPTION_GROUPS[envvar],
            value=_option_value(param),
            default=_option_default(param),
            meaning=f"{(param.help or '').strip()} Same as {_commands(options)}.",
            options=[_commands(options)],
        )
    order = {group: index for index, group in enumerate(GROUPS)}

    def place(row: Variable) -> tuple[int, int]:
        first = row.group in OPTIONS_FIRST and row.name in OPTION_GROUPS
        return order[row.group], 0 if first else 1

    return sorted(rows.values(), key=place)


# --- the document -----------------------------------------------------------------------


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def configuration_markdown() -> str:
    """docs/configuration.md, as ``runtime-store config-reference`` writes it."""
    from app.settings import GROUPS

    rows = variables()
    lines = [
        "# Configuration",
        "",
        "<!-- Generated from app/settings.py and the command line's options: do not edit.",
        f"     Regenerate with: {REGENERATE} -->",
        "",
        "The service reads its settings from `RUNTIME_STORE_*` environment variables (the "
        "options of `runtime-store serve` read theirs too). A value given wrongly stops "
        "`serve`, and every command that reads the settings, with one line that names the "
        "variable and what to do; `serve` warns about a `RUNTIME_STORE_*` variable that is "
        "none of these, naming the closest one. Switches take `on`/`off` "
        "(`true`/`false`, `yes`/`no`, `1`/`0`); durations take `30d`, `12h`, `15m`, `90s`; "
        "lists are comma-separated.",
        "",
    ]
    lines += [
        f"- [{GROUP_TEXT[group][0]}](#{_anchor(GROUP_TEXT[group][0])})"
        for group in GROUPS
        if any(row.group == group for row in rows)
    ]
    for group in GROUPS:
        members = [row for row in rows if row.group == group]
        if not members:
            continue
        title, intro = GROUP_TEXT[group]
        lines += ["", f"## {title}", "", intro, ""]
        lines += ["| variable | value | default | meaning |", "| --- | --- | --- | --- |"]
        for row in members:
            lines.append(
                f"| `{row.name}` | {_cell(row.value)} | {_cell(row.default)} "
                f"| {_cell(row.meaning)} |"
            )
    return "\n".join(lines) + "\n"


def _anchor(title: str) -> str:
    """GitHub's anchor of a heading."""
    kept = "".join(c for c in title.lower() if c.isalnum() or c in " -")
    return kept.replace(" ", "-")


@cli.command("config-reference")
def config_reference(
    output: Annotated[Path, typer.Option(help="Where to write the reference.")] = Path(
        "docs/configuration.md"
    ),
) -> None:
    """Write the configuration reference (the committed docs/configuration.md) from the
    settings; ``-`` writes it to standard output."""
    text = configuration_markdown()
    if str(output) == "-":
        sys.stdout.write(text)
        return
    output.write_text(text)
    typer.echo(f"wrote {output}")


# --- unknown variables ------------------------------------------------------------------


def known_variables() -> set[str]:
    """The variables of the reference, and those of the tests and benchmarks."""
    return {row.name for row in variables()} | set(NOT_SETTINGS)


def unknown_variable_warnings(environ: Mapping[str, str]) -> list[str]:
    """One line for each ``RUNTIME_STORE_*`` variable of ``environ`` that nothing reads,
    naming the closest known one (by the part after the prefix)."""
    documented = sorted(row.name for row in variables())
    known = set(documented) | set(NOT_SETTINGS)
    suffixes = {name.removeprefix(PREFIX): name for name in documented}
    lines = []
    for name in sorted(environ):
        if not name.startswith(PREFIX) or name in known:
            continue
        close = difflib.get_close_matches(name.removeprefix(PREFIX), suffixes, n=1, cutoff=0.6)
        hint = (
            f"did you mean {suffixes[close[0]]}?"
            if close
            else "the settings are listed in docs/configuration.md"
        )
        lines.append(f"warning: {name} is not a setting; {hint}")
    return lines
