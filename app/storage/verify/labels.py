"""The search copy of every run's labels (``run_labels``, CONTRACT.md 11.1) equals the run's
own labels: one row per label, keys and values as ``rows.label_text`` writes them, the
run's start time, and no row for a run that does not exist."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from app.storage.database.row_mapping import label_text
from app.storage.database.tables import run_labels
from app.storage.verify.reading import KeyRange
from app.storage.verify.report import RUN_LABELS, Violation


def check_run_labels(
    conn: Connection, in_range: KeyRange, rows: Sequence[Row[Any]]
) -> Iterator[Violation]:
    """One violation per run of the page (or label row without a run) that disagrees."""
    stored: dict[str, dict[str, tuple[str, int]]] = {}
    for label in conn.execute(sa.select(run_labels).where(in_range(run_labels.c.run_id))):
        stored.setdefault(label.run_id, {})[label.key] = (label.value, label.started_at_ms)
    for row in rows:
        expected = {
            label_text(key): (label_text(value), row.started_at_ms)
            for key, value in json.loads(row.labels).items()
        }
        found = stored.pop(row.run_id, {})
        if found != expected:
            yield Violation(
                RUN_LABELS,
                row.run_id,
                row.session_id or "",
                f"run_labels hold {sorted(found.items())}, the run's labels are "
                f"{sorted(expected.items())}",
            )
    for run_id, found in stored.items():
        yield Violation(RUN_LABELS, run_id, "", f"{len(found)} run_labels rows without a run")
