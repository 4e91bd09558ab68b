"""What ``db verify`` reports: the invariant names, one finding, and the whole report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

# Invariant names, as reported.
RUN_STARTED_FIRST: Final = "run_started_first"
RECORD_IDS: Final = "record_ids_contiguous"
SESSION_POSITIONS: Final = "session_positions_contiguous"
POSITION_PRESENCE: Final = "session_position_presence"
TERMINAL_RECORD: Final = "terminal_status_record"
SUSPENSION_CHECKPOINT: Final = "checkpoint_iff_suspended"
STOPPED_START: Final = "stopped_start_shape"
CANCELLATION_PROVENANCE: Final = "cancellation_provenance"
LIFECYCLE_KEYS: Final = "lifecycle_keys_resolve"
PURGED_SESSION: Final = "purged_session_empty"
CHILD_LINKS: Final = "child_links"
CONTINUATION_SUCCESSOR: Final = "continuation_successor"
RUN_LABELS: Final = "run_labels_match"
RECORD_OWNER: Final = "record_owner"
DANGLING_ROWS: Final = "dangling_rows"
START_FACTS: Final = "start_kind_and_digest"
# Run seeds (CONTRACT.md 15; verify/seeds.py).
SEED_CHAINS: Final = "seed_chains"
SEED_DECLARATIONS: Final = "seed_declarations"
SEED_PUBLICATION: Final = "seed_publication"
SEED_ATTACHMENT: Final = "seed_attachment"

INVARIANTS: Final = (
    RUN_STARTED_FIRST,
    RECORD_IDS,
    SESSION_POSITIONS,
    POSITION_PRESENCE,
    TERMINAL_RECORD,
    SUSPENSION_CHECKPOINT,
    STOPPED_START,
    CANCELLATION_PROVENANCE,
    LIFECYCLE_KEYS,
    PURGED_SESSION,
    CHILD_LINKS,
    CONTINUATION_SUCCESSOR,
    RUN_LABELS,
    RECORD_OWNER,
    DANGLING_ROWS,
    START_FACTS,
    SEED_CHAINS,
    SEED_DECLARATIONS,
    SEED_PUBLICATION,
    SEED_ATTACHMENT,
)

#: How many gaps, duplicates or links a detail names before it stops listing.
DETAIL_ITEMS: Final = 5


@dataclass(frozen=True, slots=True)
class Violation:
    invariant: str
    run_id: str
    session_id: str
    detail: str


@dataclass(slots=True)
class VerifyReport:
    violations: list[Violation] = field(default_factory=list)
    runs_checked: int = 0
    sessions_checked: int = 0
    records_checked: int = 0
    #: Seed operations checked (with their attempts and records).
    seeds_checked: int = 0
    #: Rows of tombstoned runs that a purge has yet to delete: not violations (the next
    #: purge of their session deletes them), but reported.
    purge_pending_records: int = 0
    purge_pending_checkpoints: int = 0
    #: Seed records of a reserved run ID whose operation a purge or retention deleted.
    purge_pending_seed_records: int = 0
    #: Records (and seed records) an SQLite import in progress has copied ahead of its runs
    #: (import_holds.py): not violations (the import publishes their runs and seed
    #: operations, or gives them back), but reported.
    import_pending_records: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        pending = ""
        if (
            self.purge_pending_records
            or self.purge_pending_checkpoints
            or self.purge_pending_seed_records
        ):
            seeds = (
                f", {self.purge_pending_seed_records} seed records"
                if self.purge_pending_seed_records
                else ""
            )
            pending = (
                f"; {self.purge_pending_records} records{seeds} and "
                f"{self.purge_pending_checkpoints} checkpoints of purged sessions or deleted "
                "sessionless runs not yet deleted (purge those sessions again, or run retention)"
            )
        if self.import_pending_records:
            pending += (
                f"; {self.import_pending_records} records of an import in progress "
                "(published with their runs, or given back)"
            )
        seeds = f", {self.seeds_checked} seed operations" if self.seeds_checked else ""
        return (
            f"checked {self.runs_checked} runs, {self.sessions_checked} sessions, "
            f"{self.records_checked} records{seeds}: {len(self.violations)} violation(s)"
            f"{pending}"
        )
