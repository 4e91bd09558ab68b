"""Every code block of README.md runs as shown, on a fresh clone, twice (issues 19, 33, 48).

The test starts ``runtime-store serve`` on the SQLite file ``./runtime-store.db`` of a
directory that stands for a fresh clone after ``./scripts/run`` (open, on loopback; its
``.venv`` is the virtual environment these tests run in), then reads README.md as a newcomer
would, in the order a reader meets its blocks: its ``sh``/``bash`` blocks in one fresh
shell, started in that directory with nothing of this process's environment (no
``RUNTIME_STORE_*`` variable, no virtual environment on ``PATH``: only what the README tells
the reader to do puts ``runtime-store`` there), and each ``python`` block in a fresh
interpreter of its own (the clone's ``.venv`` python, as the activated shell has it), which
proves that each block runs alone: a reader may paste any one of them. Shell blocks run
with ``set -euo pipefail`` and a ``curl`` that fails on an HTTP error. The whole README runs
twice against the same database, each time in a new shell: an example that only works once
(a fixed ID that conflicts the second time) fails the second pass. Each pass must leave no
file behind in the clone, and the README no run ``running``. The only change is the port:
the README's ``8000`` becomes the live server's. A block preceded by
``<!-- readme-test: skip (why) -->`` is not run (serving forever, the whole suite,
installing into the reader's environment), and there must be few of them.

The other tests read the documents without running them: README.md and docs/*.md link
only to files (and headings) of the repository, and the README's examples use times near
now rather than fixed ones.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.storage import upgrade_schema
from runtime_store_client import HttpStore, RunStatus
from tests.conftest import LiveServer, start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SKIP = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")
#: Run once when the shell starts: curl fails (and says why) on an HTTP error.
SHELL_PRELUDE = 'set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\n'
MAX_SKIPPED = 3
#: What a new login shell has: the system's PATH, no virtual environment, no settings.
FRESH_PATH = "/usr/local/bin:/usr/bin:/bin"
DONE = "__readme_block_done__"
BLOCK_TIMEOUT_SECONDS = 120


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


class Shell:
    """One bash, as the reader's terminal: a block's variables and the activated virtual
    environment stay for the next block. Each block is sourced from a file with stdin
    from /dev/null (a command that reads stdin cannot swallow the blocks that follow)."""

    def __init__(self, cwd: Path, env: dict[str, str], scratch: Path) -> None:
        self._scratch = scratch
        self._count = 0
        self._process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.run(SHELL_PRELUDE)

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def run(self, code: str) -> tuple[bool, str]:
        """Run ``code``; whether it succeeded (``set -e``: a failure ends the shell), and
        what it printed."""
        self._count += 1
        block = self._scratch / f"block-{self._count}.sh"
        block.write_text(code)
        assert self._process.stdin is not None
        self._process.stdin.write(f". {block} </dev/null\nprintf '\\n%s\\n' {DONE}\n")
        self._process.stdin.flush()
        output: list[str] = []
        deadline = time.monotonic() + BLOCK_TIMEOUT_SECONDS
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return False, "".join(output) + "\n(timed out)"
            if line is None:
                return False, "".join(output)
            if line.strip() == DONE:
                return True, "".join(output)
            output.append(line)

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


@dataclass(frozen=True)
class Clone:
    """A directory as a fresh clone is after ``./scripts/run``: its ``.venv`` (the one these
    tests run in) and its ``./runtime-store.db``, which the live server serves."""

    path: Path
    server: LiveServer


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clone]:
    venv = Path(sys.prefix)
    if not (venv / "bin" / "activate").is_file():
        pytest.skip(
            f"the tests do not run in a virtual environment ({venv}): ./scripts/test makes one"
        )
    path = tmp_path_factory.mktemp("clone")
    (path / ".venv").symlink_to(venv, target_is_directory=True)
    url = f"sqlite:///{path / 'runtime-store.db'}"
    upgrade_schema(url)
    live = start_server(url, tmp_path_factory.mktemp("logs") / "server.log")
    yield Clone(path, live)
    stop_server(live)


def _on_port(code: str, port: str) -> str:
    return re.sub(r"(localhost|127\.0\.0\.1):8000\b", rf"\g<1>:{port}", code)


def fresh_shell_environment(home: Path) -> dict[str, str]:
    """A new shell's environment: nothing of this process's but the code it tests
    (``PYTHONPATH``, when a worktree's tests point it at their checkout)."""
    env = {"HOME": str(home), "PATH": FRESH_PATH, "LANG": "C.UTF-8", "TERM": "dumb"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def python_environment(clone: Clone, home: Path) -> dict[str, str]:
    """A fresh shell's environment after ``. .venv/bin/activate``, as the README says."""
    env = fresh_shell_environment(home)
    env["VIRTUAL_ENV"] = str(clone.path / ".venv")
    env["PATH"] = f"{clone.path / '.venv' / 'bin'}:{FRESH_PATH}"
    return env


def _text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


#: Python's interactive prompt, fed a file line by line as a paste types it: a blank line
#: ends the statement being typed (so one inside an indented body cuts it short). Exit
#: status 1 when any statement raised or did not compile.
PASTE = """
import code, sys

class Paste(code.InteractiveConsole):
    failed = False

    def showtraceback(self):
        self.failed = True
        super().showtraceback()

    def showsyntaxerror(self, filename=None, **kwargs):
        self.failed = True
        super().showsyntaxerror(filename, **kwargs)

    def runcode(self, code):
        if not DRY:
            super().runcode(code)

DRY = sys.argv[2:] == ["--dry"]
console = Paste()
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    console.push(line)
console.push("")
sys.exit(1 if console.failed else 0)
"""


def run_python_block(clone: Clone, block: Block, code: str, scratch: Path, home: Path) -> None:
    """One Python block in an interpreter of its own, pasted into its prompt line by line
    as a reader pastes it into a new ``python``."""
    where = f"README.md line {block.line} (python, pasted)"
    script = scratch / f"block-{block.line}.py"
    script.write_text(code)
    try:
        done = subprocess.run(
            [str(clone.path / ".venv" / "bin" / "python"), "-c", PASTE, str(script)],
            cwd=clone.path,
            env=python_environment(clone, home),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{where} timed out:\n{_text(exc.stdout)}\n{_text(exc.stderr)}")
    if done.returncode != 0:
        log = clone.server.log()[-3000:]
        pytest.fail(f"{where} failed:\n{done.stdout}\n{done.stderr}\n{log}")


def run_readme(clone: Clone, scratch: Path) -> None:
    """Every runnable block of README.md, in order: the shell blocks in one new shell, each
    Python block in a new interpreter."""
    blocks = [b for b in readme_blocks(README.read_text()) if b.lang in ("sh", "bash", "python")]
    port = clone.server.base_url.rsplit(":", 1)[1]
    home = scratch / "home"
    home.mkdir()
    shell = Shell(clone.path, fresh_shell_environment(home), scratch)
    try:
        for block in blocks:
            if block.skip:
                continue
            code = _on_port(block.code, port)
            if block.lang == "python":
                run_python_block(clone, block, code, scratch, home)
                continue
            where = f"README.md line {block.line} ({block.lang})"
            ok, output_text = shell.run(code)
            assert ok, f"{where} failed:\n{output_text}"
            assert "Traceback" not in output_text, f"{where}:\n{output_text}"
    finally:
        shell.close()


def clone_files(clone: Clone) -> set[str]:
    """The clone's files (its ``.venv`` and the server's database aside): what a reader
    would find left in the repository."""
    found: set[str] = set()
    for directory, subdirectories, files in os.walk(clone.path):
        subdirectories[:] = [d for d in subdirectories if d != ".venv"]
        for name in files:
            relative = Path(directory, name).relative_to(clone.path).as_posix()
            if not relative.startswith("runtime-store.db"):
                found.add(relative)
    return found


def test_a_fresh_shell_has_no_runtime_store_until_the_readme_says_how(
    clone: Clone, tmp_path: Path
) -> None:
    """The shell the README runs in is fresh: ``runtime-store`` is not on its PATH until
    the reader activates ``.venv`` as the Quickstart says."""
    shell = Shell(clone.path, fresh_shell_environment(tmp_path), tmp_path)
    try:
        ok, output = shell.run("if command -v runtime-store; then exit 1; fi\n")
        assert ok, f"runtime-store is on the fresh PATH already: {output}"
        ok, output = shell.run(". .venv/bin/activate\ncommand -v runtime-store\n")
        assert ok, output
        found = Path(output.strip()).resolve()
        assert found == (clone.path / ".venv" / "bin" / "runtime-store").resolve()
    finally:
        shell.close()


def test_every_readme_block_runs_on_a_fresh_clone_twice(clone: Clone, tmp_path: Path) -> None:
    blocks = readme_blocks(README.read_text())
    runnable = [b for b in blocks if b.lang in ("sh", "bash", "python")]
    skipped = [b for b in runnable if b.skip]
    assert len(skipped) <= MAX_SKIPPED, [(b.line, b.skip) for b in skipped]
    assert len(runnable) - len(skipped) >= 4
    assert len([b for b in runnable if b.lang == "python" and not b.skip]) >= 2
    before = clone_files(clone)
    for attempt in ("first", "second"):
        scratch = tmp_path / attempt
        scratch.mkdir()
        run_readme(clone, scratch)
        assert clone_files(clone) == before, f"the README's {attempt} pass left files behind"
    # Every run the README starts, it finishes.
    with HttpStore(clone.server.base_url) as store:
        running = store.search_runs(statuses=[RunStatus.RUNNING])
    assert [run.run_id for run in running.runs] == [], "the README leaves runs running"


@pytest.mark.parametrize("document", ["README.md", "docs/guide.md", "docs/frameworks.md"])
def test_every_python_block_can_be_pasted_into_the_interactive_prompt(
    document: str, tmp_path: Path
) -> None:
    """A reader pastes a block into ``python``: no blank line may end an indented body
    before its end (each block compiled statement by statement as the prompt reads it;
    nothing runs)."""
    for block in readme_blocks((ROOT / document).read_text()):
        if block.lang != "python":
            continue
        script = tmp_path / f"block-{block.line}.py"
        script.write_text(block.code)
        done = subprocess.run(
            [sys.executable, "-c", PASTE, str(script), "--dry"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, f"{document} line {block.line}:\n{done.stderr}"


def test_the_readme_uses_times_near_now() -> None:
    """No runnable block writes a fixed time: the console would show a run that took
    seconds as days old (issue 48). Times come from the clock (``date``, ``datetime.now``)."""
    fixed = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
    for block in readme_blocks(README.read_text()):
        if block.lang in ("sh", "bash", "python") and not block.skip:
            assert not fixed.search(block.code), f"README.md line {block.line}: a fixed time"


#: The documents a reader is sent to: the README and every document under docs/.
DOCUMENTS = (README, *sorted((ROOT / "docs").glob("*.md")))
#: Documents written for newcomers, whose ``docs/…``-style paths in backticks must exist too.
GUIDES = (
    README,
    *(ROOT / "docs" / name for name in ("guide.md", "administration.md", "development.md")),
)


def _prose(text: str) -> str:
    """``text`` without its fenced code blocks (their ``#`` lines are no headings)."""
    return re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.MULTILINE | re.DOTALL)


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a Markdown text's headings."""
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", _prose(text), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchor, count = slug, 1
        while anchor in anchors:
            anchor, count = f"{slug}-{count}", count + 1
        anchors.add(anchor)
    return anchors


def test_heading_anchors_are_githubs() -> None:
    text = "# A b\n## Export, import, retention\n```\n# not one\n```\n## `x.y` (1.2)\n## A b\n"
    assert heading_anchors(text) == {"a-b", "export-import-retention", "xy-12", "a-b-1"}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_documents_send_readers_only_to_files_in_the_repository(document: Path) -> None:
    """Every relative link of README.md and docs/*.md names a file of the repository (and
    a heading of it, when it names one); the newcomers' documents name no file in
    backticks that the repository does not ship (the contract is docs/contract.md)."""
    text = document.read_text()
    prose = _prose(text)
    missing: list[str] = []
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", prose):
        if re.match(r"[a-z]+:", target):
            continue  # http://, https://, mailto:
        path = (document.parent / target).resolve() if target else document
        if not path.exists() or not path.is_relative_to(ROOT):
            missing.append(f"{target}#{anchor}" if anchor else target)
        elif anchor and path.suffix == ".md" and anchor not in heading_anchors(path.read_text()):
            missing.append(f"{target}#{anchor}")
    if document in GUIDES:
        assert "CONTRACT.md" not in text
        named = re.findall(r"`((?:docs|scripts|clients|app|tests|alembic|bench)/[\w./-]+)`", text)
        missing += [name for name in named if not (ROOT / name).exists()]
    assert not missing, f"{document.relative_to(ROOT)}: {sorted(set(missing))}"


def test_the_readme_sends_readers_to_the_contract_and_the_guides() -> None:
    links = set(re.findall(r"\]\(([^)#\s]+)", README.read_text()))
    for target in (
        "docs/contract.md",
        "docs/guide.md",
        "docs/administration.md",
        "docs/development.md",
        "docs/configuration.md",
        "docs/performance.md",
    ):
        assert target in links, target
    assert "../" not in README.read_text()


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


def test_the_performance_page_stays_a_page() -> None:
    """docs/performance.md holds today's figures; earlier sittings live in its git history."""
    assert len((ROOT / "docs" / "performance.md").read_text().splitlines()) <= 300
