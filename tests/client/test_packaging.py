"""Workers install the client alone: it imports without FastAPI or SQLAlchemy, and without
the agent frameworks of its extras (docs/frameworks.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.packaging import ROOT, fresh_venv, install


def test_client_installs_and_imports_in_a_venv_without_the_service(tmp_path: Path) -> None:
    python = fresh_venv(tmp_path / "venv")
    install(python, str(ROOT / "clients/python"))
    probe = (
        "import importlib.util, runtime_store_client as c\n"
        "assert c.HttpStore and c.AsyncHttpStore and c.Store and c.RunStatus('completed')\n"
        "missing = [m for m in ('fastapi', 'sqlalchemy', 'app', 'langgraph', 'agents')\n"
        "           if importlib.util.find_spec(m)]\n"
        "assert not missing, missing\n"
        # httpcore imports sniffio on every async request; missing, each import fails anew.
        "assert importlib.util.find_spec('sniffio'), 'sniffio is not installed'\n"
        "print('ok')\n"
    )
    result = subprocess.run(
        [str(python), "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
