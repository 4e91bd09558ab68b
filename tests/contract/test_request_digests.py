"""Contract rules of request digests on engine starts (CONTRACT.md 12.1).

Every rule runs for each of the four engine starts (3.3-3.6): a ``Start`` builds one
valid request of its kind, sends it with a digest, and derives the variants a test needs
(a replay at a new time, a changed field).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final

import pytest

from runtime_store_client import (
    AppendResult,
    EventConflictError,
    InvalidArgumentError,
    Record,
    RunConflictError,
    RunMeta,
    RunStart,
    RunStartOutcome,
    RunStatus,
)
from tests.contract.builders import (
    Backend,
    all_records,
    at,
    canceled_record,
    checkpoint,
    expect_rejected,
    link_record,
    new_session,
    observe,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
)

DIGEST: Final = bytes(range(1, 33))
OTHER_DIGEST: Final = bytes(range(2, 34))
SITE: Final = {"site": "one"}
KINDS: Final = ("root", "child", "one_shot", "one_shot_child")
CLOSED: Final = (RunStatus.SUSPENDED, RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELED)
#: The time a re-executed workflow proposes when it replays a start.
LATER: Final = at(5_000)


@dataclass(frozen=True)
class Start:
    """One engine start request of ``kind``; ``parent`` is running when it is built."""

    kind: str
    run: RunStart
    started: Record
    canceled: Record | None = None
    parent: RunStart | None = None
    link: Record | None = None

    def send(self, store: Backend, digest: bytes | None = DIGEST) -> Any:
        if self.kind == "root":
            assert self.canceled is not None
            return store.start_root_run(
                self.run, self.started, self.canceled, request_digest=digest
            )
        if self.kind == "child":
            assert self.link is not None
            assert self.canceled is not None
            return store.start_child_run(
                self.run, self.link, self.started, self.canceled, request_digest=digest
            )
        if self.kind == "one_shot":
            return store.start_one_shot_run(self.run, self.started, request_digest=digest)
        assert self.link is not None
        return store.start_one_shot_child_run(
            self.run, self.link, self.started, request_digest=digest
        )

    @property
    def run_ids(self) -> tuple[str, ...]:
        return (self.run.run_id,) if self.parent is None else (self.run.run_id, self.parent.run_id)

    def at(self, started_at: datetime, link_at: datetime | None = None) -> Start:
        """The same request proposing another start time (its records' times follow)."""
        return self.changed(
            run=replace(self.run, started_at=started_at), link_at=link_at or started_at
        )

    def changed(
        self, *, run: RunStart | None = None, link_at: datetime | None = None, **records: Any
    ) -> Start:
        """The request with another run start (its records rebuilt for it, keeping their
        keys) and record fields changed: ``started={"turn_id": "t"}``."""
        new_run = run or self.run
        started = replace(
            started_record(new_run, event_key=self.started.event_key), **records.get("started", {})
        )
        canceled = None
        if self.canceled is not None:
            canceled = replace(
                canceled_record(new_run, event_key=self.canceled.event_key),
                **records.get("canceled", {}),
            )
        link = None
        if self.link is not None and self.parent is not None:
            link = replace(
                link_record(
                    self.parent,
                    new_run,
                    event_key=self.link.event_key,
                    timestamp=link_at or self.link.timestamp,
                ),
                **records.get("link", {}),
            )
        return replace(self, run=new_run, started=started, canceled=canceled, link=link)


def build(store: Backend, kind: str, *, session_id: str = "") -> Start:
    """A valid start of ``kind`` (a fresh session, and a running parent, when it needs them)."""
    if kind in ("root", "child") and not session_id:
        session_id = new_session(store).id
    if kind == "root":
        run = run_start(session_id=session_id, labels=SITE)
        return Start(kind, run, started_record(run), canceled_record(run))
    if kind == "child":
        parent = start_root(store, session_id).run
        run = run_start(session_id=session_id, parent_run_id=parent.run_id, labels=SITE)
        return Start(
            kind,
            run,
            started_record(run),
            canceled_record(run),
            parent,
            link_record(parent, run, timestamp=at(1)),
        )
    if kind == "one_shot":
        run = run_start(labels=SITE)
        return Start(kind, run, started_record(run))
    parent = run_start(agent_id="agent-parent")
    store.start_one_shot_run(parent, started_record(parent))
    run = run_start(parent_run_id=parent.run_id, labels=SITE)
    return Start(
        kind, run, started_record(run), None, parent, link_record(parent, run, timestamp=at(1))
    )


def as_retry(result: Any) -> Any:
    """The result a retry answers: the same, every record ``inserted = false``."""
    changes = {
        field.name: replace(value, inserted=False)
        for field in dataclasses.fields(result)
        if isinstance(value := getattr(result, field.name), AppendResult)
    }
    return replace(result, **changes)


def close(store: Backend, run: RunStart, status: RunStatus) -> None:
    if status is RunStatus.SUSPENDED:
        store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
    else:
        store.record_run_terminal(run.run_id, status, terminal_record(run, status))


def rejected(store: Backend, start: Start, digest: bytes | None, error: Any, code: str) -> None:
    expect_rejected(store, lambda: start.send(store, digest), error, code, *start.run_ids)


kinds = pytest.mark.parametrize("kind", KINDS)


# --- validation ---------------------------------------------------------------------------


@kinds
@pytest.mark.parametrize(
    "digest", [b"", b"\x01" * 31, b"\x01" * 33, bytes(32)], ids=["empty", "31", "33", "zero"]
)
def test_request_digest_not_32_nonzero_bytes_is_invalid_argument(
    store: Backend, kind: str, digest: bytes
) -> None:
    start = build(store, kind)
    rejected(store, start, digest, InvalidArgumentError, "invalid_argument")


# --- first start --------------------------------------------------------------------------


@kinds
def test_start_with_request_digest_stores_the_run_as_without_one(store: Backend, kind: str) -> None:
    start = build(store, kind)
    result = start.send(store)
    assert result.run_status is RunStatus.RUNNING
    assert result.started.inserted if hasattr(result, "started") else result.record.inserted
    meta = store.load_run(start.run.run_id)
    assert "request_digest" not in {field.name for field in dataclasses.fields(RunMeta)}
    assert meta.status is RunStatus.RUNNING
    assert meta.start_outcome is RunStartOutcome.PROCEED
    assert all_records(store, start.run.run_id) == [replace(start.started, id="1")]


# --- retries: the digest first ------------------------------------------------------------


@kinds
def test_exact_retry_with_the_stored_digest_returns_the_original_ids(
    store: Backend, kind: str
) -> None:
    start = build(store, kind)
    first = start.send(store)
    before = observe(store, *start.run_ids)
    assert start.send(store) == as_retry(first)
    assert observe(store, *start.run_ids) == before


@kinds
def test_retry_with_another_digest_is_run_conflict(store: Backend, kind: str) -> None:
    start = build(store, kind)
    start.send(store)
    rejected(store, start, OTHER_DIGEST, RunConflictError, "run_conflict")


@kinds
def test_retry_without_the_digest_the_run_was_started_with_is_run_conflict(
    store: Backend, kind: str
) -> None:
    start = build(store, kind)
    start.send(store)
    rejected(store, start, None, RunConflictError, "run_conflict")


@kinds
def test_retry_with_a_digest_of_a_run_started_without_one_is_run_conflict(
    store: Backend, kind: str
) -> None:
    start = build(store, kind)
    start.send(store, None)
    rejected(store, start, DIGEST, RunConflictError, "run_conflict")


@kinds
def test_digest_is_compared_before_the_records_of_a_retry(store: Backend, kind: str) -> None:
    """Same key, other content is ``event_conflict`` for an exact-retry check; with another
    digest the digest is found first: ``run_conflict``."""
    start = build(store, kind)
    start.send(store)
    changed = start.changed(started={"turn_id": "turn-other"})
    rejected(store, changed, DIGEST, EventConflictError, "event_conflict")
    rejected(store, changed, OTHER_DIGEST, RunConflictError, "run_conflict")


# --- a running run's retry: exactly 3.3 ---------------------------------------------------


@kinds
def test_running_runs_retry_at_another_time_is_run_conflict(store: Backend, kind: str) -> None:
    start = build(store, kind)
    start.send(store)
    rejected(store, start.at(LATER), DIGEST, RunConflictError, "run_conflict")


@pytest.mark.parametrize("kind", ["child", "one_shot_child"])
def test_running_childs_retry_with_another_link_time_is_event_conflict(
    store: Backend, kind: str
) -> None:
    start = build(store, kind)
    start.send(store)
    later_link = start.changed(link={"timestamp": at(2)})
    rejected(store, later_link, DIGEST, EventConflictError, "event_conflict")


# --- a closed run's start replayed --------------------------------------------------------


@kinds
@pytest.mark.parametrize("status", CLOSED)
def test_closed_runs_start_replayed_at_a_new_time_answers_the_original(
    store: Backend, kind: str, status: RunStatus
) -> None:
    start = build(store, kind)
    first = start.send(store)
    close(store, start.run, status)
    before = observe(store, *start.run_ids)
    replayed = start.at(LATER).send(store)
    assert replayed == replace(as_retry(first), run_status=status)
    assert observe(store, *start.run_ids) == before


@kinds
def test_closed_runs_replay_keeps_updated_at(store: Backend, kind: str) -> None:
    start = build(store, kind)
    start.send(store)
    close(store, start.run, RunStatus.COMPLETED)
    meta = store.load_run(start.run.run_id)
    start.at(LATER).send(store)
    assert store.load_run(start.run.run_id) == meta


@kinds
def test_closed_runs_replay_without_the_digest_is_run_conflict(store: Backend, kind: str) -> None:
    start = build(store, kind)
    start.send(store)
    close(store, start.run, RunStatus.COMPLETED)
    rejected(store, start.at(LATER), None, RunConflictError, "run_conflict")
    rejected(store, start, None, RunConflictError, "run_conflict")


@kinds
def test_closed_runs_replay_with_another_digest_is_run_conflict(store: Backend, kind: str) -> None:
    start = build(store, kind)
    start.send(store)
    close(store, start.run, RunStatus.FAILED)
    rejected(store, start.at(LATER), OTHER_DIGEST, RunConflictError, "run_conflict")


@kinds
def test_closed_run_started_without_a_digest_is_not_replayed_at_a_new_time(
    store: Backend, kind: str
) -> None:
    start = build(store, kind)
    first = start.send(store, None)
    close(store, start.run, RunStatus.COMPLETED)
    rejected(store, start.at(LATER), None, RunConflictError, "run_conflict")
    assert start.send(store, None) == replace(as_retry(first), run_status=RunStatus.COMPLETED)


REPLAY_CHANGES: Final[dict[str, Callable[[Start], Start]]] = {
    "labels": lambda s: s.changed(run=replace(s.run, labels={"site": "two"})),
    "agent": lambda s: s.changed(run=replace(s.run, agent_id="agent-other")),
    "started_key": lambda s: replace(s, started=replace(s.started, event_key="start-other")),
    "started_turn": lambda s: s.changed(started={"turn_id": "turn-other"}),
}


@kinds
@pytest.mark.parametrize("change", list(REPLAY_CHANGES))
def test_closed_runs_replay_changing_anything_but_times_is_run_conflict(
    store: Backend, kind: str, change: str
) -> None:
    start = build(store, kind)
    start.send(store)
    close(store, start.run, RunStatus.COMPLETED)
    changed = REPLAY_CHANGES[change](start.at(LATER))
    rejected(store, changed, DIGEST, RunConflictError, "run_conflict")


@pytest.mark.parametrize("kind", ["child", "one_shot_child"])
@pytest.mark.parametrize(
    "link", [{"turn_id": "turn-other"}, {"event_key": "link-other"}], ids=["turn", "key"]
)
def test_closed_childs_replay_changing_its_link_is_run_conflict(
    store: Backend, kind: str, link: dict[str, str]
) -> None:
    start = build(store, kind)
    start.send(store)
    close(store, start.run, RunStatus.COMPLETED)
    changed = start.at(LATER).changed(link=link)
    rejected(store, changed, DIGEST, RunConflictError, "run_conflict")


def test_stopped_starts_replay_answers_stop_with_the_original_records(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(2))
    start = build(store, "root", session_id=session.id)
    first = start.send(store)
    assert first.outcome is RunStartOutcome.STOP
    before = observe(store, start.run.run_id, session_id=session.id)
    replayed = start.at(LATER).send(store)
    assert replayed == as_retry(first)
    assert replayed.canceled == AppendResult(
        id="2", inserted=False, session_status=first.canceled.session_status
    )
    assert observe(store, start.run.run_id, session_id=session.id) == before


def test_stopped_starts_replay_with_another_canceled_record_is_run_conflict(
    store: Backend,
) -> None:
    session = new_session(store)
    store.end_session(session.id, at(2))
    start = build(store, "root", session_id=session.id)
    start.send(store)
    changed = start.at(LATER).changed(canceled={"turn_id": "turn-other"})
    rejected(store, changed, DIGEST, RunConflictError, "run_conflict")
