"""LangGraph's own conformance suite (``langgraph-checkpoint-conformance``) against both
savers, each on a live service over SQLite and over PostgreSQL.

Every base capability (put, put_writes, get_tuple, list, delete_thread) must pass, and the
extended ones as docs/frameworks.md says: copy_thread and prune pass, delete_for_runs is
refused (not implemented, so the suite reports it as such). The report is printed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import CapabilityReport, ProgressCallbacks

from runtime_store_client import AsyncHttpStore, HttpStore
from runtime_store_client.langgraph import AsyncRuntimeStoreSaver, RuntimeStoreSaver
from tests.conftest import LiveServer

#: What the docs promise for the extended capabilities.
EXTENDED = {"copy_thread": True, "prune": True, "delete_for_runs": None}


def _check(report: CapabilityReport) -> None:
    report.print_report()
    assert report.passed_all_base(), report.to_dict()
    for capability, expected in EXTENDED.items():
        result = report.results[capability]
        assert result.passed is expected, (capability, result)
        assert result.detected is (expected is not None), (capability, result)


def test_async_saver_passes_the_conformance_suite(live_server: LiveServer) -> None:
    @checkpointer_test(name=f"AsyncRuntimeStoreSaver ({live_server.database_url.split(':')[0]})")
    async def saver() -> AsyncIterator[AsyncRuntimeStoreSaver]:
        async with AsyncHttpStore(live_server.base_url) as store:
            yield AsyncRuntimeStoreSaver(store)

    _check(asyncio.run(validate(saver, progress=ProgressCallbacks.verbose())))


def test_sync_saver_passes_the_conformance_suite(live_server: LiveServer) -> None:
    @checkpointer_test(name=f"RuntimeStoreSaver ({live_server.database_url.split(':')[0]})")
    async def saver() -> AsyncIterator[RuntimeStoreSaver]:
        with HttpStore(live_server.base_url) as store:
            yield RuntimeStoreSaver(store)

    _check(asyncio.run(validate(saver, progress=ProgressCallbacks.default())))


@pytest.fixture(autouse=True)
def _show_report(capsys: pytest.CaptureFixture[str]) -> object:
    """The report goes to the test output even when the test passes (-rP would too)."""
    yield
    with capsys.disabled():
        print(capsys.readouterr().out)
