"""Issue 19, item 8: ``--help`` shows a flag as a flag, never with a value type such as
``<bool>`` (typer's rich help does that; the CLI uses plain help). The real command runs in
a subprocess, as a user runs it."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys

import pytest


@functools.cache
def _help(*command: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "app", *command, "--help"],
        env={**os.environ, "COLUMNS": "100", "TERM": "xterm-256color", "FORCE_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        (["serve"], ["--no-migrate", "--insecure", "--access-log", "--help"]),
        (["sessions", "list"], ["--all", "--json", "--help"]),
    ],
    ids=lambda value: "-".join(value) if isinstance(value[0], str) and value[0][0] != "-" else "",
)
def test_help_shows_flags_without_a_value_type(command: list[str], flags: list[str]) -> None:
    text = _help(*command)
    assert "<bool>" not in text
    for flag in flags:
        (line,) = [line for line in text.splitlines() if line.strip().startswith(flag + " ")]
        assert re.match(rf"\s+{flag}( / --no-[\w-]+)?\s{{2,}}\S", line), line
    # Options that take a value still name its type.
    assert re.search(r"--\w[\w-]* <(str|int|int range)>", text)


def test_help_is_plain_text_without_boxes_or_escape_codes() -> None:
    text = _help("serve")
    first = text.splitlines()[0]
    assert first.startswith("Usage: ")
    assert first.endswith(" serve [OPTIONS]")
    assert "\x1b[" not in text
    assert "╭" not in text
