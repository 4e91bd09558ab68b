"""Every code block of README.md runs as shown, against a live server (issue 19, item 5).

The test starts ``runtime-store serve`` on a fresh SQLite file (open, on loopback, as
``./scripts/run`` does) and runs README.md's ``sh``/``bash`` and ``python`` blocks in the
order a reader meets them: shell blocks in bash with ``set -euo pipefail`` and a ``curl``
that fails on an HTTP error, Python blocks in one shared namespace (as pasted into one
interpreter), all in a temporary directory. The only change is the port: the README's
``8000`` becomes the live server's. A block preceded by ``<!-- readme-test: skip (why) -->``
is not run (serving forever, the whole suite, installing into this environment), and there
must be few of them.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.storage import upgrade_schema
from tests.conftest import LiveServer, start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SKIP = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")
#: Defined before every shell block: curl fails (and says why) on an HTTP error.
SHELL_PRELUDE = 'set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; echo; }\n'
MAX_SKIPPED = 3


@dataclass(frozen=True)
class Block:
    line: int
    lang: str
    code: str
    skip: str | None


def readme_blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, each with its skip marker, if any."""
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opened = FENCE.match(lines[index])
        if opened is None or not opened["lang"]:
            index += 1
            continue
        previous = next((line for line in reversed(lines[:index]) if line.strip()), "")
        marker = SKIP.search(previous)
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        code = "\n".join(lines[index + 1 : end]) + "\n"
        blocks.append(Block(index + 1, opened["lang"], code, marker["why"] if marker else None))
        index = end + 1
    return blocks


def test_blocks_are_found_with_their_markers() -> None:
    text = (
        "a\n```sh\necho 1\n```\n<!-- readme-test: skip (why not) -->\n```python\nx = 1\n```\n"
        "```\nplain\n```\n"
    )
    assert readme_blocks(text) == [
        Block(2, "sh", "echo 1\n", None),
        Block(6, "python", "x = 1\n", "why not"),
    ]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("readme")
    url = f"sqlite:///{directory / 'readme.db'}"
    upgrade_schema(url)
    live = start_server(url, directory / "server.log")
    yield live
    stop_server(live)


def _on_port(code: str, port: str) -> str:
    return re.sub(r"(localhost|127\.0\.0\.1):8000\b", rf"\g<1>:{port}", code)


def test_every_readme_block_runs_against_a_live_server(server: LiveServer, tmp_path: Path) -> None:
    blocks = readme_blocks(README.read_text())
    runnable = [b for b in blocks if b.lang in ("sh", "bash", "python")]
    skipped = [b for b in runnable if b.skip]
    assert len(skipped) <= MAX_SKIPPED, [(b.line, b.skip) for b in skipped]
    assert len(runnable) - len(skipped) >= 5
    port = server.base_url.rsplit(":", 1)[1]
    env = {
        **os.environ,
        "RUNTIME_STORE_URL": server.base_url,
        "RUNTIME_STORE_DATABASE_URL": server.database_url,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    for block in runnable:
        if block.skip:
            continue
        code = _on_port(block.code, port)
        where = f"README.md line {block.line} ({block.lang})"
        if block.lang == "python":
            output = io.StringIO()
            try:
                with contextlib.redirect_stdout(output), contextlib.chdir(tmp_path):
                    exec(compile(code, where, "exec"), namespace)  # the README's own code
            except Exception as exc:
                pytest.fail(f"{where} failed: {exc!r}\n{output.getvalue()}\n{server.log()[-3000:]}")
            continue
        done = subprocess.run(
            ["bash", "-c", SHELL_PRELUDE + code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{where} failed:\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, f"{where}:\n{done.stderr}"


def test_the_client_install_claim_names_its_dependencies() -> None:
    """The README's comment on ``pip install ./clients/python`` lists exactly what the
    client's pyproject.toml asks for."""
    (line,) = [
        line for line in README.read_text().splitlines() if "pip install ./clients/python" in line
    ]
    claimed = {name.strip() for name in line.split(":", 1)[1].split(",")}
    project = tomllib.loads((ROOT / "clients" / "python" / "pyproject.toml").read_text())
    required = {
        re.split(r"[<>=\[; ]", dep, maxsplit=1)[0] for dep in project["project"]["dependencies"]
    }
    assert claimed == required
