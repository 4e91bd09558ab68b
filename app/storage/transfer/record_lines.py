"""The record lines of a session file, replayed in session order against their runs as the
operations would have accepted them: a run begins with its ``run_started``, a child after
its parent's link, a continuation only of a suspended predecessor, nothing after a
terminal record."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

from app.domain import payloads
from app.domain import starts as decide
from app.domain import validation as v
from app.domain.append import check_owner
from app.domain.commands import check_terminal_against_run
from app.storage.database.row_mapping import NEW_RECORD_FIELDS
from app.storage.transfer.format import RECORD_KEYS
from app.storage.transfer.lines import ImportState, _record_values, _Run
from app.storage.transfer.reading import _object, _payload, _text, _time
from runtime_store_client import (
    InvalidArgumentError,
    Record,
    RunConflictError,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStartOutcome,
    RunStatus,
)


class RecordLines(ImportState):
    """The record lines."""

    def record(self, number: int, value: Any) -> None:
        assert self.session is not None
        obj = _object(value, RECORD_KEYS, "record")
        record = Record(
            id=_text(obj, "id", "record"),
            event_key=obj["event_key"],
            run_id=obj["run_id"],
            agent_id=obj["agent_id"],
            session_id=obj["session_id"],
            turn_id=obj["turn_id"],
            type=obj["type"],
            payload=_payload(obj["payload"]),
            timestamp=_time(obj["timestamp"], "record.timestamp"),
        )
        self.limits.check_record(record)
        rec = v.check_record(record)
        run = self.runs.get(rec.run_id)
        if run is None:
            raise InvalidArgumentError(f"record of run {rec.run_id!r}, which has no run line")
        try:
            check_owner(run.state, rec)
        except RunRecordOwnerMismatchError as exc:  # a broken line, not a refused write
            raise InvalidArgumentError(
                exc.message, run_id=run.run_id, event_key=rec.event_key
            ) from None
        if record.id != str(run.count + 1):
            raise InvalidArgumentError(
                f"record ID {record.id!r} of run {run.run_id!r}: the next ID is {run.count + 1}"
            )
        if run.status is None and rec.type != payloads.RUN_STARTED:
            raise InvalidArgumentError(f"the first record of run {run.run_id!r} is not run_started")
        _STEPS.get(rec.type, RecordLines.ordinary)(self, run, record, rec)
        run.count += 1
        self.counts["records"] += 1
        # ``rows.record_row`` spelled for the hot loop: a session's records all carry it.
        row = dict(zip(NEW_RECORD_FIELDS, _record_values(rec), strict=True))
        row["seq"], row["session_seq"] = run.count, self.counts["records"]
        self.add(self.records, row, number)

    def ordinary(self, run: _Run, record: Record, rec: v.NewRecord) -> None:
        del record
        run.require_running(f"record {rec.event_key!r}")

    def started(self, run: _Run, record: Record, rec: v.NewRecord) -> None:
        if run.status is not None:
            raise InvalidArgumentError(f"a second run_started on run {run.run_id!r}")
        predecessor = payloads.decode_run_started(rec.payload).predecessor_run_id
        start = RunStart(
            run_id=run.run_id,
            agent_id=run.state.agent_id,
            session_id=run.state.session_id,
            parent_run_id=run.state.parent_run_id,
            predecessor_run_id=predecessor,
            started_at=record.timestamp,
            labels=run.new.labels,
        )
        new = v.check_run_start(
            start, sessionful=True, child=bool(start.parent_run_id), continuation_allowed=True
        )
        run.new = dataclasses.replace(run.new, predecessor_run_id=new.predecessor_run_id)
        v.check_started_record(record, run.new)
        run.expect_key("start_key", rec.event_key)
        if run.state.parent_run_id and "parent_link_key" not in run.matched:
            raise InvalidArgumentError(
                f"run {run.run_id!r} starts before its parent holds its child_run_linked"
            )
        if predecessor:
            self.continuation(run, predecessor)
        run.status = RunStatus.RUNNING

    def continuation(self, run: _Run, predecessor_id: str) -> None:
        """3.13 and 12.4, decided as a start decides them (``app/domain/starts``) on the
        predecessor as the file has replayed it so far; the predecessor's line must name
        this run as its successor."""
        predecessor = self.runs.get(predecessor_id)
        if predecessor is None:
            raise InvalidArgumentError(
                f"run {run.run_id!r} continues run {predecessor_id!r}, which has no run line"
            )
        if predecessor.state.successor_run_id != run.run_id:
            raise InvalidArgumentError(
                f"predecessor {predecessor_id!r} of run {run.run_id!r} remembers successor "
                f"{predecessor.state.successor_run_id!r}"
            )
        if predecessor.status is None:
            raise InvalidArgumentError(
                f"predecessor {predecessor_id!r} of run {run.run_id!r} has not started at "
                "this point of the file"
            )
        replayed = dataclasses.replace(
            predecessor.state,
            status=predecessor.status,
            successor_run_id=predecessor.continued_by,
        )
        try:
            decide.continuation(replayed, run.new)
            if decide.moves_parent(replayed, run.new):
                self.moved_link(predecessor, run)
        except RunConflictError as exc:  # a broken file, not a refused start
            raise InvalidArgumentError(f"{exc.message} at this point of the file") from None
        predecessor.continued_by = run.run_id

    @staticmethod
    def moved_link(predecessor: _Run, run: _Run) -> None:
        """12.4: a child continued under another parent repeats its predecessor's link."""
        # Both links were replayed before the run_started that names the predecessor.
        assert predecessor.link is not None
        assert run.link is not None
        differs = decide.link_difference(predecessor.link, run.link)
        if differs is not None:
            name, expected, actual = differs
            raise RunConflictError(
                f"a continuation under parent {run.state.parent_run_id!r} must repeat its "
                f"predecessor's link: {name} {expected!r}, not {actual!r}"
            )

    def linked(self, parent: _Run, record: Record, rec: v.NewRecord) -> None:
        parent.require_running("child_run_linked")
        child_id = payloads.decode_child_run_linked(rec.payload).child_run_id
        child = self.runs.get(child_id)
        if child is None or child.state.parent_run_id != parent.run_id:
            raise InvalidArgumentError(
                f"child_run_linked names run {child_id!r}, which is not a child of "
                f"{parent.run_id!r} in the file"
            )
        if "parent_link_key" in child.matched:
            raise InvalidArgumentError(f"a second child_run_linked for run {child_id!r}")
        v.check_link_record(record, child.new)
        linked = payloads.decode_child_run_linked(rec.payload)
        child.link = decide.LinkFacts.of(linked, rec.agent_id)
        child.expect_key("parent_link_key", rec.event_key)

    def cancellation(self, run: _Run, record: Record, rec: v.NewRecord) -> None:
        run.require_running("runtime.cancellation_intent")
        if not run.state.cancellation_reason or "cancellation_key" in run.matched:
            raise InvalidArgumentError(
                f"a cancellation intent on run {run.run_id!r}, whose run line has no "
                "cancellation reason or another intent"
            )
        v.check_cancellation(run.run_id, run.state.cancellation_reason, record)
        run.expect_key("cancellation_key", rec.event_key)

    def suspension(self, run: _Run, record: Record, rec: v.NewRecord) -> None:
        run.require_running("run_suspended")
        if run.checkpoint is None:
            raise InvalidArgumentError(
                f"run_suspended on run {run.run_id!r}, which has no checkpoint"
            )
        v.check_suspension(run.run_id, run.checkpoint, record)
        run.expect_key("suspension_key", rec.event_key)
        run.expect_key("terminal_key", rec.event_key)
        run.status = RunStatus.SUSPENDED

    def completion(self, run: _Run, record: Record, rec: v.NewRecord) -> None:
        if run.state.start_outcome is RunStartOutcome.STOP:
            if run.count != 1:
                raise InvalidArgumentError("a stopped start's run_completed is its second record")
            v.check_canceled_record(record, run.new)
        else:
            run.require_running("run_completed")
            if not run.state.status.is_finished:
                raise InvalidArgumentError(
                    f"run_completed on run {run.run_id!r}, which is {run.state.status.value} "
                    "on its line"
                )
            terminal, _, payload = v.check_terminal(run.run_id, run.state.status, record)
            check_terminal_against_run(
                run.state.labels, run.state.cancellation_reason, terminal, payload
            )
        run.expect_key("terminal_key", rec.event_key)
        run.status = run.state.status


_Step = Callable[[RecordLines, _Run, Record, v.NewRecord], None]


_STEPS: Final[dict[str, _Step]] = {
    payloads.RUN_STARTED: RecordLines.started,
    payloads.CHILD_RUN_LINKED: RecordLines.linked,
    payloads.CANCELLATION_INTENT: RecordLines.cancellation,
    payloads.RUN_SUSPENDED: RecordLines.suspension,
    payloads.RUN_COMPLETED: RecordLines.completion,
}
