"""docs/frameworks.md's examples run as written: each Python block pasted into a new
``python`` of this venv (the frameworks installed, as its ``pip install`` line says), against
a live service, with nothing else defined."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import LiveServer
from tests.docs.test_readme import PASTE, ROOT, readme_blocks

FRAMEWORKS_DOC = ROOT / "docs" / "frameworks.md"


def test_every_example_of_the_frameworks_page_runs_pasted(
    sqlite_server: LiveServer, tmp_path: Path
) -> None:
    port = sqlite_server.base_url.rsplit(":", 1)[1]
    blocks = [b for b in readme_blocks(FRAMEWORKS_DOC.read_text()) if b.lang == "python"]
    assert len(blocks) == 2
    printed: list[str] = []
    for block in blocks:
        script = tmp_path / f"block-{block.line}.py"
        script.write_text(block.code.replace("127.0.0.1:8000", f"127.0.0.1:{port}"))
        done = subprocess.run(
            [sys.executable, "-c", PASTE, str(script)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        where = f"docs/frameworks.md line {block.line}"
        assert done.returncode == 0, f"{where}:\n{done.stdout}\n{done.stderr}"
        printed.append(done.stdout)
    graph, session = printed
    assert graph.strip() == "{'topic': 'tides', 'note': 'thinking about tides'}", graph
    assert "'hi, how can I help?'" in session, session
