"""Per-run start checks (CONTRACT.md 12.1, 12.2): the start kind and the request digest
agree with the run's records.

A request digest is 32 bytes, not all zero, and only an engine start carries one. A
synchronous run is sessionless and parentless, was never linked, continued nor continues
anything, and its start's outcome is ``proceed``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from app.domain.payloads import RUN_STARTED, decode_run_started
from app.domain.validation import check_request_digest
from app.storage.verify.facts import RunChecks, RunFacts, decoded
from app.storage.verify.report import START_FACTS
from runtime_store_client import InvalidArgumentError, RunStartKind, RunStartOutcome


def request_digest(run: RunFacts) -> Iterator[str]:
    digest = run.row.request_digest
    if digest is None:
        return
    try:
        check_request_digest(bytes(digest))
    except InvalidArgumentError as exc:
        yield exc.message
    if run.row.start_kind != RunStartKind.ENGINE.value:
        yield f"a {run.row.start_kind} run carries a request digest"


def synchronous_run(run: RunFacts) -> Iterator[str]:
    row = run.row
    if row.start_kind != RunStartKind.SYNCHRONOUS.value:
        return
    facts = (
        ("session", run.session_id),
        ("parent", row.parent_run_id),
        ("parent_link_key", row.parent_link_key or ""),
        ("successor", row.successor_run_id or ""),
    )
    for name, value in facts:
        if value:
            yield f"synchronous run has {name} {value!r}"
    if row.start_outcome != RunStartOutcome.PROCEED.value:
        yield f"synchronous run has start outcome {row.start_outcome}"
    if row.start_type == RUN_STARTED and row.start_payload is not None:
        started, error = decoded(decode_run_started, row.start_payload)
        if not error and started.predecessor_run_id:
            yield f"synchronous run continues {started.predecessor_run_id!r}"


CHECKS: Final[RunChecks] = (
    (START_FACTS, request_digest),
    (START_FACTS, synchronous_run),
)
