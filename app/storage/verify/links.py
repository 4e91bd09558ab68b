"""Per-run child-link checks: a child's ``child_run_linked`` record is on its parent.

Both sides are checked: a child holds the link its ``parent_link_key`` names, and a parent
holds links only to its own children.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import sqlalchemy as sa

from app.domain.payloads import CHILD_RUN_LINKED, decode_child_run_linked
from app.storage.database.tables import run_records, runs
from app.storage.verify.facts import RunChecks, RunFacts, decoded
from app.storage.verify.report import CHILD_LINKS, DETAIL_ITEMS

#: Run IDs per ``IN (...)`` lookup of a parent's children.
_CHUNK: Final = 500


def child_side(run: RunFacts) -> Iterator[str]:
    """A child's link is on its parent, under its parent_link_key, naming the child."""
    row = run.row
    if not row.parent_run_id:
        if row.parent_link_key is not None:
            yield f"root run remembers parent_link_key {row.parent_link_key!r}"
        return
    if row.parent_found is None:
        yield f"parent run {row.parent_run_id!r} does not exist"
        return
    if (row.parent_session or "") != run.session_id:
        yield f"parent {row.parent_run_id!r} is in session {row.parent_session or ''!r}"
    if row.parent_link_key is None:
        yield "child run remembers no parent_link_key"
    elif row.link_type == CHILD_RUN_LINKED:
        linked, error = decoded(decode_child_run_linked, row.link_payload)
        if error:
            yield f"link {row.parent_link_key!r}: {error}"
        elif (linked.child_run_id, linked.child_agent_id) != (run.run_id, row.agent_id):
            yield (
                f"link {row.parent_link_key!r} names child {linked.child_run_id!r} "
                f"(agent {linked.child_agent_id!r})"
            )


def parent_side(run: RunFacts) -> Iterator[str]:
    """Every link on this run names an existing child of this run.

    Each child is checked to hold its own link (``child_side``) and a link names one
    child, so equal counts mean every link is accounted for; only a mismatch makes the
    links of this run worth decoding.
    """
    if run.stats.link_n == run.row.children:
        return
    problems = _link_problems(run)
    if not problems:
        problems.append(
            f"{run.stats.link_n} child_run_linked records for {run.row.children} children"
        )
    if len(problems) > DETAIL_ITEMS:
        problems[DETAIL_ITEMS:] = [f"and {len(problems) - DETAIL_ITEMS} more"]
    yield from problems


def _link_problems(run: RunFacts) -> list[str]:
    """The links on this run that do not decode or do not name a child of this run."""
    links = run.conn.execute(
        sa.select(run_records.c.event_key, run_records.c.payload)
        .where(run_records.c.run_id == run.run_id, run_records.c.type == CHILD_RUN_LINKED)
        .order_by(run_records.c.seq)
    ).all()
    named: dict[str, str] = {}
    problems: list[str] = []
    for link in links:
        linked, error = decoded(decode_child_run_linked, link.payload)
        if error:
            problems.append(f"link {link.event_key!r}: {error}")
        else:
            named[linked.child_run_id] = link.event_key
    candidates = list(named)  # ``named`` shrinks below as children are found
    for chunk_start in range(0, len(candidates), _CHUNK):
        chunk = candidates[chunk_start : chunk_start + _CHUNK]
        children = run.conn.execute(
            sa.select(runs.c.run_id, runs.c.parent_run_id).where(runs.c.run_id.in_(chunk))
        ).all()
        for child in children:
            if child.parent_run_id == run.run_id:
                del named[child.run_id]
            else:
                problems.append(
                    f"link {named.pop(child.run_id)!r} names run {child.run_id!r}, "
                    f"whose parent is {child.parent_run_id!r}"
                )
    problems.extend(
        f"link {key!r} names child {child!r}, which does not exist" for child, key in named.items()
    )
    return problems


CHECKS: Final[RunChecks] = (
    (CHILD_LINKS, child_side),
    (CHILD_LINKS, parent_side),
)
