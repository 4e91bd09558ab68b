"""The run lines of a session file: each run's meta, keys and checkpoint, checked as a
start would have stored them (CONTRACT.md 3.3-3.6, 12.1, 12.2); the seed a run attaches
(15.5) is checked against the seed lines at the end (``seed_lines``)."""

from __future__ import annotations

from typing import Any

from app.domain import starts as decide
from app.domain import validation as v
from app.domain.state import RunState
from app.storage.transfer.format import KEY_COLUMNS
from app.storage.transfer.lines import BATCH, ImportState, _Run
from app.storage.transfer.reading import (
    _checkpoint,
    _enum,
    _millis,
    _object,
    _request_digest,
    _time,
)
from runtime_store_client import (
    InvalidArgumentError,
    RunStart,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
)


class RunLines(ImportState):
    """The run lines."""

    def run(self, number: int, value: Any) -> None:
        assert self.session is not None
        obj = _object(value, self.run_keys, "run")
        start = RunStart(
            run_id=obj["run_id"],
            agent_id=obj["agent_id"],
            session_id=obj["session_id"],
            parent_run_id=obj["parent_run_id"],
            started_at=_time(obj["started_at"], "run.started_at"),
            labels=obj["labels"],
            seed_end_id=obj.get("seed_end_id", ""),
        )
        self.limits.check_run_start(start)
        new = v.check_run_start(
            start, sessionful=True, child=bool(start.parent_run_id), continuation_allowed=True
        )
        if new.session_id != self.session.session_id:
            raise InvalidArgumentError("run.session_id must be the header's session")
        if new.run_id in self.runs:
            raise InvalidArgumentError(
                f"run {new.run_id!r} is also on line {self.runs[new.run_id].line}"
            )
        keys = self.keys(obj["keys"], child=bool(new.parent_run_id))
        state = RunState(
            run_id=new.run_id,
            agent_id=new.agent_id,
            session_id=new.session_id,
            parent_run_id=new.parent_run_id,
            status=_enum(RunStatus, obj["status"], "run.status"),
            start_outcome=_enum(RunStartOutcome, obj["start_outcome"], "run.start_outcome"),
            started_at_ms=new.started_at_ms,
            updated_at_ms=_millis(obj["updated_at"], "run.updated_at"),
            labels=new.labels_json,
            cancellation_reason=self.identifier(obj, "cancellation_reason"),
            record_count=0,
            successor_run_id=self.identifier(obj, "successor_run_id"),
            request_digest=_request_digest(obj.get("request_digest")),
            start_kind=_enum(RunStartKind, obj.get("start_kind", "engine"), "run.start_kind"),
            seed_end_id=new.seed_end_id,
            is_new=True,
            **keys,
        )
        if state.start_kind is not RunStartKind.ENGINE:
            raise InvalidArgumentError("a session's run is engine-started (12.2)")
        self.check_stop(state)
        run = _Run(number, state, new, _checkpoint(obj["checkpoint"], self.limits))
        self.runs[new.run_id] = run
        self.counts["runs"] += 1
        self.unchecked.append(run)
        if len(self.unchecked) >= BATCH:
            self.check_free_ids()

    def identifier(self, obj: dict[str, Any], key: str) -> str:
        value = v.optional_text(obj[key], f"run.{key}")
        self.limits.check_id(value, f"run.{key}")
        return value

    def keys(self, value: Any, *, child: bool) -> dict[str, Any]:
        obj = _object(value, tuple(KEY_COLUMNS), "run.keys")
        keys: dict[str, Any] = {}
        for name, column in KEY_COLUMNS.items():
            key = v.optional_text(obj[name], f"run.keys.{name}")
            self.limits.check_id(key, f"run.keys.{name}")
            keys[column] = key or None
        if keys["start_key"] is None:
            raise InvalidArgumentError("run.keys.start is required")
        if child != (keys["parent_link_key"] is not None):
            raise InvalidArgumentError(
                "run.keys.parent_link is required for a child run and empty for a root run"
            )
        keys["start_key"] = str(keys["start_key"])
        return keys

    def check_stop(self, state: RunState) -> None:
        """A start stopped by an ended session (3.3 step 5) is canceled for that reason."""
        assert self.session is not None
        if state.start_outcome is not RunStartOutcome.STOP:
            return
        if decide.outcome(self.session) is not RunStartOutcome.STOP:
            raise InvalidArgumentError("a stopped start needs an ended session")
        differences = decide.stopped_differences(state.status, state.cancellation_reason)
        if differences:
            name, stored, stopped = differences[0]
            raise InvalidArgumentError(f"a stopped start has {name} {stopped!r}, not {stored!r}")
