"""The append check (CONTRACT.md 2.3) and the ordinary append (3.7), as decisions.

Every record any operation writes goes through ``append_check`` before it is inserted:
the record's agent and session must be its run's; a record already stored under its
event key is an exact retry (its original ID) when it is *the same* (1.7: every field of
``NewRecord``, the payload byte for byte) and an ``event_conflict`` otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.domain.state import RunState, StoredRecord
from app.domain.validation import NewRecord
from runtime_store_client import (
    EventConflictError,
    RunNotActiveError,
    RunRecordOwnerMismatchError,
    StoreError,
)


def check_owner(run: RunState, record: NewRecord) -> None:
    """The record's agent and session must be its run's (``run_record_owner_mismatch``)."""
    if record.agent_id != run.agent_id or record.session_id != run.session_id:
        raise RunRecordOwnerMismatchError(
            f"record {record.event_key!r} must carry agent {run.agent_id!r} and "
            f"session {run.session_id!r} of run {run.run_id!r}",
            run_id=run.run_id,
            event_key=record.event_key,
        )


def same_record(run_id: str, stored: StoredRecord | None, record: NewRecord) -> str | None:
    """The key part of the append check: ``None`` when the key is free, the stored
    record's ID when it is the same record (an exact retry), else ``event_conflict``."""
    if stored is None:
        return None
    if stored.record != record:
        raise EventConflictError(
            f"event {record.event_key!r} of run {run_id!r} is already stored with other content",
            run_id=run_id,
            event_key=record.event_key,
        )
    return str(stored.seq)


def append_check(run: RunState, record: NewRecord, stored: StoredRecord | None) -> str | None:
    """The append check of a record on ``run`` whose key holds ``stored``: the ID of the
    same record (exact retry), or ``None`` when it may be inserted."""
    check_owner(run, record)
    if run.is_new:
        return None
    return same_record(run.run_id, stored, record)


def ordinary_append(run: RunState, record: NewRecord, stored: StoredRecord | None) -> str | None:
    """3.7 after the run's lock and purge checks: the exact retry's ID (also on a stopped
    run), ``None`` to insert, ``run_not_active`` on a terminal run."""
    retried = append_check(run, record, stored)
    if retried is not None:
        return retried
    if run.terminal:
        raise RunNotActiveError(f"run {run.run_id!r} is {run.status.value}", run_id=run.run_id)
    return None


def named(exc: StoreError, event_key: str) -> StoreError:
    """The error of one record of a batch, naming that record (11.2)."""
    if not exc.event_key:
        exc.event_key = event_key
    return exc


def batch_steps(
    run: RunState, records: Sequence[NewRecord], stored: Mapping[str, StoredRecord | None]
) -> list[str | int | None]:
    """11.2 after the run's lock and purge checks, record by record in input order: the
    stored ID of an exact retry (``str``), the index of the earlier record of the batch this
    one repeats (``int``), or ``None`` to insert. The first record that fails fails the
    batch, named in the error; a key repeated with other content is ``event_conflict``."""
    steps: list[str | int | None] = []
    first: dict[str, int] = {}
    for index, record in enumerate(records):
        earlier = first.get(record.event_key)
        if earlier is not None:
            if records[earlier] != record:
                raise EventConflictError(
                    f"event {record.event_key!r} appears twice in the batch with other content",
                    run_id=run.run_id,
                    event_key=record.event_key,
                )
            steps.append(earlier)
            continue
        try:
            steps.append(ordinary_append(run, record, stored.get(record.event_key)))
        except StoreError as exc:
            raise named(exc, record.event_key) from None
        first[record.event_key] = index
    return steps
