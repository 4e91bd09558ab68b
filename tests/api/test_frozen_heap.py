"""A served worker's start-up heap leaves the garbage collector's full passes
(``app.serving.freeze_startup_heap``, docs/performance.md "Serving processes").

A full collection walks every tracked object and stops every thread of the worker
meanwhile: with the ~160,000 objects of a started worker that was 70-150 ms on the 2-core
machine, once every second or two during a big import, and each stalled the worker's
other requests.
"""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator

import pytest

from app.main import create_app, create_app_from_environment
from app.settings import Settings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """The test process's heap as it was: this process builds many apps."""
    gc.unfreeze()
    try:
        yield
    finally:
        gc.unfreeze()


def test_a_served_worker_freezes_its_start_up_heap(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch, unfrozen: None
) -> None:
    monkeypatch.setenv("RUNTIME_STORE_DATABASE_URL", sqlite_url)
    with TestClient(create_app_from_environment()) as client:
        assert client.get("/readyz").status_code == 200
        frozen = gc.get_freeze_count()
        walked = len(gc.get_objects())  # what a full collection still walks

    assert frozen > 50_000
    assert walked < frozen / 4, (walked, frozen)


def test_an_app_built_in_process_leaves_the_heap_alone(sqlite_url: str, unfrozen: None) -> None:
    with TestClient(create_app(Settings(database_url=sqlite_url))) as client:
        assert client.get("/readyz").status_code == 200
        assert gc.get_freeze_count() == 0
