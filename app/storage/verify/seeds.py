"""Seed pages (CONTRACT.md 15): every seed fact, for each seed operation of a page of run
IDs, its attempts and their records, and for each run of the page that attaches a seed.

* **chains** (``seed_chains``): each attempt's records are numbered ``1..n`` and its
  counters are its records' (history end, body end, prepared bytes, prefix position, an
  open literal); history records come before ``prepared`` ones; a literal part and only
  one has a ``final`` flag; a ``prefix`` is the attempt's source, and there is at most
  one; a settlement's tombstone is abandoned and holds nothing.
* **declarations** (``seed_declarations``): an attempt belongs to an operation, and its
  declaration is valid, its attempt's, and names its operation's agent, session and
  command.
* **publication** (``seed_publication``): at most one published attempt per run ID, the
  one its operation names, and it passes the publication rules; no seed of a purged
  session or of a reserved run ID remains.
* **attachment** (``seed_attachment``): a run's ``seed_end_id`` is its run ID's published
  history end, prepared for the run's agent and session.

Per page, one ``GROUP BY`` pass over the page's seed records yields each attempt's record
statistics; only the attempts' small rows (and a chain's prefix records) are read
otherwise. Seed records of no attempt are pending deletion when their run ID is
tombstoned (a purge or retention deleted the operation first), an SQLite import's when
the run ID is claimed, and dangling otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.domain import seeds
from app.domain.seeds import AttemptState, Owner, Variant
from app.domain.state import SessionRowStatus
from app.storage.database.tables import (
    import_claims,
    run_tombstones,
    runs,
    seed_attempts,
    seed_operations,
    seed_records,
    sessions,
)
from app.storage.seeds import rows as seed_rows
from app.storage.unit_of_work.import_holds import RUN as RUN_CLAIM
from app.storage.verify.reading import KeyRange, pages
from app.storage.verify.report import (
    DANGLING_ROWS,
    SEED_ATTACHMENT,
    SEED_CHAINS,
    SEED_DECLARATIONS,
    SEED_PUBLICATION,
    VerifyReport,
    Violation,
)
from runtime_store_client import StoreError


@dataclass(frozen=True, slots=True)
class ChainStats:
    """What one ``GROUP BY run_id, attempt_id`` pass knows of an attempt's records."""

    n: int = 0
    min_id: int = 0
    max_id: int = 0
    #: The last history record's ID (0: none); the first prepared record's (0: none).
    max_history: int = 0
    min_prepared: int = 0
    prepared_bytes: int = 0
    prefixes: int = 0
    prefix_id: int = 0
    #: Records whose ``final`` flag is set on another variant than a literal part, or
    #: missing on a literal part, or whose variant is none of the four.
    bad_shape: int = 0


_NO_RECORDS = ChainStats()


def verify_seed_pages(conn: Connection, page_size: int, report: VerifyReport) -> None:
    for in_range in pages(conn, seed_operations.c.run_id, page_size):
        stats = _chain_stats(conn, in_range)
        ops = {row.run_id: row for row in _operations(conn, in_range)}
        report.seeds_checked += len(ops)
        attempts = list(
            conn.execute(sa.select(seed_attempts).where(in_range(seed_attempts.c.run_id)))
        )
        last = _last_records(conn, in_range)
        prefixes = _prefix_records(conn, in_range)
        published: dict[str, list[str]] = {}
        for row in attempts:
            key = (row.run_id, row.attempt_id)
            chain = stats.pop(key, _NO_RECORDS)
            op = ops.get(row.run_id)
            session_id = "" if op is None else op.session_id or ""
            for invariant, problems in (
                (SEED_CHAINS, _chain(row, chain, last.get(key), prefixes.get(key, []))),
                (SEED_DECLARATIONS, _declaration(row, op)),
            ):
                found = list(problems)
                if found:
                    report.violations.append(
                        Violation(invariant, row.run_id, session_id, "; ".join(found))
                    )
            if row.state == AttemptState.PUBLISHED.value:
                published.setdefault(row.run_id, []).append(row.attempt_id)
                found = list(_publishable(row))
                if found:
                    report.violations.append(
                        Violation(SEED_PUBLICATION, row.run_id, session_id, "; ".join(found))
                    )
        for run_id, op in ops.items():
            found = list(_operation(op, published.get(run_id, [])))
            if found:
                report.violations.append(
                    Violation(SEED_PUBLICATION, run_id, op.session_id or "", "; ".join(found))
                )
        _recordless(conn, stats, report)
        report.violations.extend(_attachments(conn, in_range))


# --- the page's rows ---------------------------------------------------------------------


def _chain_stats(conn: Connection, in_range: KeyRange) -> dict[tuple[str, str], ChainStats]:
    sr = seed_records.c
    prepared = sr.variant == Variant.PREPARED.value
    literal = sr.variant == Variant.LITERAL_PART.value
    prefix = sr.variant == Variant.PREFIX.value
    known = sr.variant.in_([variant.value for variant in Variant])
    bad_shape = sa.or_(
        ~known, sa.and_(literal, sr.final.is_(None)), sa.and_(~literal, sr.final.is_not(None))
    )
    query = (
        sa.select(
            sr.run_id,
            sr.attempt_id,
            sa.func.count().label("n"),
            sa.func.min(sr.id).label("min_id"),
            sa.func.max(sr.id).label("max_id"),
            sa.func.coalesce(sa.func.max(sa.case((~prepared, sr.id))), 0).label("max_history"),
            sa.func.coalesce(sa.func.min(sa.case((prepared, sr.id))), 0).label("min_prepared"),
            sa.func.coalesce(
                sa.func.sum(sa.case((prepared, sa.func.length(sr.data)), else_=0)), 0
            ).label("prepared_bytes"),
            sa.func.sum(sa.case((prefix, 1), else_=0)).label("prefixes"),
            sa.func.coalesce(sa.func.max(sa.case((prefix, sr.id))), 0).label("prefix_id"),
            sa.func.sum(sa.case((bad_shape, 1), else_=0)).label("bad_shape"),
        )
        .where(in_range(sr.run_id))
        .group_by(sr.run_id, sr.attempt_id)
    )
    found: dict[tuple[str, str], ChainStats] = {}
    for row in conn.execute(query).mappings():
        values = {
            name: int(value) for name, value in row.items() if name not in ("run_id", "attempt_id")
        }
        found[(row["run_id"], row["attempt_id"])] = ChainStats(**values)
    return found


def _operations(conn: Connection, in_range: KeyRange) -> list[Any]:
    ops = seed_operations.c
    return list(
        conn.execute(
            sa.select(
                seed_operations,
                sessions.c.status.label("session_status"),
                run_tombstones.c.run_id.label("tombstoned"),
            )
            .outerjoin(sessions, sessions.c.session_id == ops.session_id)
            .outerjoin(run_tombstones, run_tombstones.c.run_id == ops.run_id)
            .where(in_range(ops.run_id))
        )
    )


def _last_records(conn: Connection, in_range: KeyRange) -> dict[tuple[str, str], Any]:
    """Each attempt's record at its body end (an open literal ends there)."""
    sr, sa_ = seed_records.c, seed_attempts.c
    query = (
        sa.select(sr.run_id, sr.attempt_id, sr.variant, sr.final)
        .join(
            seed_attempts,
            sa.and_(
                sa_.run_id == sr.run_id, sa_.attempt_id == sr.attempt_id, sa_.body_end == sr.id
            ),
        )
        .where(in_range(sr.run_id), in_range(sa_.run_id))
    )
    return {(row.run_id, row.attempt_id): row for row in conn.execute(query)}


def _prefix_records(conn: Connection, in_range: KeyRange) -> dict[tuple[str, str], list[bytes]]:
    sr = seed_records.c
    query = sa.select(sr.run_id, sr.attempt_id, sr.data).where(
        in_range(sr.run_id), sr.variant == Variant.PREFIX.value
    )
    found: dict[tuple[str, str], list[bytes]] = {}
    for row in conn.execute(query):
        found.setdefault((row.run_id, row.attempt_id), []).append(bytes(row.data))
    return found


# --- per attempt ---------------------------------------------------------------------------


def _chain(row: Any, chain: ChainStats, last: Any, prefixes: list[bytes]) -> Iterator[str]:
    """The chain's records against its counters (15.1)."""
    if row.declaration is None:
        if row.state != AttemptState.ABANDONED.value:
            yield f"a tombstone (no declaration) is {row.state}, not abandoned"
        if chain.n or row.body_end or row.history_end or row.prepared_bytes:
            yield f"a tombstone holds {chain.n} records (ends {row.history_end}/{row.body_end})"
        return
    yield from _counters(row, chain)
    yield from _shape(row, chain, last, prefixes)


def _counters(row: Any, chain: ChainStats) -> Iterator[str]:
    """Positions 1..n, and the counters the appends moved."""
    if chain.n != chain.max_id or (chain.n and chain.min_id != 1) or chain.max_id != row.body_end:
        yield (
            f"body end {row.body_end}, {chain.n} records with IDs "
            f"{chain.min_id}..{chain.max_id} (not 1..{row.body_end})"
        )
    if chain.max_history != row.history_end:
        yield f"history end {row.history_end}, its last history record is {chain.max_history}"
    if chain.prepared_bytes != row.prepared_bytes:
        yield (
            f"prepared_bytes {row.prepared_bytes}, its prepared records hold {chain.prepared_bytes}"
        )
    if (row.prefix_id or 0) != chain.prefix_id:
        yield f"prefix_id {row.prefix_id}, its prefix record is {chain.prefix_id or None}"


def _shape(row: Any, chain: ChainStats, last: Any, prefixes: list[bytes]) -> Iterator[str]:
    """History before the compiled start, one prefix equal to the source, variants and
    flags, an open literal only at the end."""
    if chain.min_prepared and chain.max_history > chain.min_prepared:
        yield f"history record {chain.max_history} after prepared record {chain.min_prepared}"
    if chain.prefixes > 1:
        yield f"{chain.prefixes} prefix records"
    if any(row.source is None or data != row.source.encode() for data in prefixes):
        yield "a prefix record that is not the attempt's source"
    if chain.bad_shape:
        yield f"{chain.bad_shape} records of no variant, or with a final flag off a literal part"
    open_literal = (
        last is not None
        and last.variant == Variant.LITERAL_PART.value
        and last.final is not None
        and not last.final
    )
    if bool(row.literal_open) != open_literal:
        yield f"literal_open {bool(row.literal_open)}, its last record says {open_literal}"


def _declaration(row: Any, op: Any) -> Iterator[str]:
    """The attempt's declaration: valid, its own, its operation's."""
    if op is None:
        yield "attempt of a run ID without a seed operation"
        return
    if row.declaration is None:
        return
    try:
        declaration = seeds.check_declaration(
            seeds.declaration_from_json(json.loads(row.declaration))
        )
    except (StoreError, ValueError, KeyError, TypeError) as exc:
        yield f"attempt {row.attempt_id!r}: the declaration does not decode: {exc}"
        return
    if (declaration.run_id, declaration.attempt_id) != (row.run_id, row.attempt_id):
        yield f"attempt {row.attempt_id!r} holds the declaration of another attempt"
    owner = Owner(agent_id=op.agent_id, session_id=op.session_id or "", command_id=op.command_id)
    if seeds.owner_of(declaration) != owner:
        yield f"attempt {row.attempt_id!r} declares another agent, session or command"
    expected_source = declaration.kind.value != "literal"
    if (row.source is not None) != expected_source:
        yield f"attempt {row.attempt_id!r}: a {declaration.kind} seed with source {row.source}"


def _publishable(row: Any) -> Iterator[str]:
    """A published attempt passes the publication rules (15.2)."""
    try:
        attempt = seed_rows.attempt_from_row(row)
        seeds.check_publication(
            attempt,
            seeds.position_text(attempt.history_end),
            seeds.position_text(attempt.body_end),
            attempt.prepared_bytes,
        )
    except (StoreError, ValueError, KeyError, TypeError) as exc:
        yield f"published attempt {row.attempt_id!r} could not publish: {exc}"


def _operation(op: Any, published: list[str]) -> Iterator[str]:
    if op.session_status == SessionRowStatus.PURGED.value:
        yield f"seed operation of the purged session {op.session_id!r} remains"
    if op.tombstoned is not None:
        yield "the run ID is reserved (purged or deleted by retention) but its seed remains"
    if len(published) > 1:
        yield f"{len(published)} published attempts: {sorted(published)}"
    named = op.published_attempt_id
    if (named is None and published) or (named is not None and named not in published):
        yield f"the operation names published attempt {named!r}; published: {sorted(published)}"


# --- rows of no attempt; runs that attach a seed -------------------------------------------


def _recordless(
    conn: Connection, left: dict[tuple[str, str], ChainStats], report: VerifyReport
) -> None:
    """Seed records whose attempt does not exist: pending or dangling."""
    if not left:
        return
    run_ids = sorted({run_id for run_id, _ in left})
    tombstoned = set(
        conn.execute(
            sa.select(run_tombstones.c.run_id).where(run_tombstones.c.run_id.in_(run_ids))
        ).scalars()
    )
    claimed = set(
        conn.execute(
            sa.select(import_claims.c.claimed_id).where(
                import_claims.c.kind == RUN_CLAIM, import_claims.c.claimed_id.in_(run_ids)
            )
        ).scalars()
    )
    for (run_id, attempt_id), chain in sorted(left.items()):
        if run_id in tombstoned:
            report.purge_pending_seed_records += chain.n
        elif run_id in claimed:
            report.import_pending_records += chain.n
        else:
            report.violations.append(
                Violation(
                    DANGLING_ROWS,
                    run_id,
                    "",
                    f"{chain.n} seed records of attempt {attempt_id!r} belong to no attempt",
                )
            )


def _attachments(conn: Connection, in_range: KeyRange) -> Iterator[Violation]:
    """15.5: a run's seed_end_id is its run ID's published history end, for its agent and
    session."""
    ops, attempts = seed_operations.c, seed_attempts.c
    query = (
        sa.select(
            runs.c.run_id,
            runs.c.agent_id,
            runs.c.session_id,
            runs.c.seed_end_id,
            attempts.state,
            attempts.history_end,
            attempts.declaration,
        )
        .outerjoin(seed_operations, ops.run_id == runs.c.run_id)
        .outerjoin(
            seed_attempts,
            sa.and_(attempts.run_id == ops.run_id, attempts.attempt_id == ops.published_attempt_id),
        )
        .where(in_range(runs.c.run_id), runs.c.seed_end_id != "")
    )
    for row in conn.execute(query):
        session_id = row.session_id or ""
        problem = _attachment(row, session_id)
        if problem:
            yield Violation(SEED_ATTACHMENT, row.run_id, session_id, problem)


def _attachment(row: Any, session_id: str) -> str:
    if row.state != AttemptState.PUBLISHED.value:
        return (
            f"the run attaches seed_end_id {row.seed_end_id!r} but its run ID has no published seed"
        )
    if row.seed_end_id != seeds.position_text(row.history_end):
        return (
            f"the run attaches seed_end_id {row.seed_end_id!r}, not the published history end "
            f"{seeds.position_text(row.history_end)!r}"
        )
    try:
        declared = json.loads(row.declaration)
        owner = (declared["agent_id"], declared["session_id"])
    except (ValueError, KeyError, TypeError):
        return "the published seed's declaration does not decode"
    if owner != (row.agent_id, session_id):
        return f"the seed was prepared for agent and session {owner}, not the run's"
    return ""
