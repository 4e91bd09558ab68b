"""The framework adapters' tests need the frameworks, which ``./scripts/test-frameworks``
installs in a venv of its own (.venv-frameworks): in the main venv they are not collected."""

from __future__ import annotations

import importlib.util

FRAMEWORKS = ("langgraph", "langgraph.checkpoint.conformance", "agents")


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


collect_ignore_glob = [] if all(_installed(name) for name in FRAMEWORKS) else ["test_*.py"]
