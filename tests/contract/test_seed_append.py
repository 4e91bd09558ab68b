"""``append_run_seed`` (CONTRACT.md 15.1 seed records, positions and command limit; 15.2 append).

Validation, then the command limit, then in one transaction: purge and the attempt (1),
abandoned (2), the key (3: exact retry or ``seed_conflict``), published (4), the exact
predecessor (5), an open literal (6), history after ``prepared`` (7), the prefix (8), and
the next position (9).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from runtime_store_client import (
    HistoryPrefix,
    InvalidArgumentError,
    LiteralPart,
    PayloadTooLargeError,
    PreparationAbandonedError,
    RunSeed,
    SeedAppendResult,
    SeedConflictError,
    SeedDeclaration,
    SeedNotFoundError,
    SeedRecord,
    StoreError,
)
from tests.contract.builders import (
    Backend,
    canceled_record,
    new_session,
    run_start,
    started_record,
)
from tests.contract.seed_builders import (
    COMMAND_LIMIT,
    NEXT_TURN_END,
    Watched,
    append_chain,
    append_command_size,
    attempt_of,
    completed_source,
    expect_seed_rejected,
    literal,
    messages_record,
    msgs,
    next_turn,
    operation_of,
    part_record,
    prefix_record,
    prepare,
    prepared_record,
    read_all_preparation_records,
    read_all_seed_records,
    seeded,
    sized,
    stored,
)


def append(store: Backend, declaration: SeedDeclaration, rec: SeedRecord) -> SeedAppendResult:
    return store.append_run_seed(declaration.run_id, declaration.attempt_id, rec)


def append_rejected(
    store: Backend,
    declaration: SeedDeclaration,
    rec: SeedRecord,
    error: type[StoreError],
    code: str,
    *,
    watch: tuple[Watched, ...] | None = None,
) -> StoreError:
    """The append fails and changed nothing (the attempt's history end included, unless
    ``watch`` is given: an abandoned or unknown attempt cannot be watched by a begin)."""
    return expect_seed_rejected(
        store,
        lambda: append(store, declaration, rec),
        error,
        code,
        declaration.run_id,
        watch=(declaration,) if watch is None else watch,
    )


def begun(store: Backend, declaration: SeedDeclaration | None = None) -> SeedDeclaration:
    declaration = declaration or literal()
    store.begin_run_seed(declaration)
    return declaration


def next_turn_begun(store: Backend) -> tuple[SeedDeclaration, HistoryPrefix]:
    source = completed_source(store, new_session(store).id)
    declaration = next_turn(source)
    seed = store.begin_run_seed(declaration)
    assert seed.source is not None
    return declaration, seed.source


# --- positions and results ------------------------------------------------------------------------


def test_appends_are_numbered_from_one_in_append_order(store: Backend) -> None:
    declaration = begun(store)
    assert append(store, declaration, messages_record("a", "0")) == SeedAppendResult(
        id="1", inserted=True
    )
    assert append(store, declaration, messages_record("b", "1")) == SeedAppendResult(
        id="2", inserted=True
    )
    assert append(store, declaration, prepared_record("c", "2")) == SeedAppendResult(
        id="3", inserted=True
    )


def test_each_attempt_numbers_its_own_records(store: Backend) -> None:
    first = begun(store)
    second = begun(store, attempt_of(first))
    assert append(store, first, messages_record("a", "0")).id == "1"
    assert append(store, second, messages_record("a", "0")).id == "1"


def test_a_history_record_moves_the_history_end_and_prepared_does_not(store: Backend) -> None:
    declaration = begun(store)
    append(store, declaration, messages_record("a", "0"))
    assert store.begin_run_seed(declaration).end_id == "1"
    append(store, declaration, prepared_record("b", "1"))
    append(store, declaration, prepared_record("c", "2"))
    assert store.begin_run_seed(declaration).end_id == "1"


def test_append_exact_retry_returns_its_original_id_not_inserted(store: Backend) -> None:
    declaration = begun(store)
    rec = messages_record("a", "0")
    append(store, declaration, rec)
    append(store, declaration, messages_record("b", "1"))
    assert append(store, declaration, rec) == SeedAppendResult(id="1", inserted=False)
    assert store.begin_run_seed(declaration).end_id == "2"


@pytest.mark.parametrize("variant", ["messages", "literal_part", "prefix", "prepared"])
def test_append_exact_retry_of_each_variant_returns_its_original_id(
    store: Backend, variant: str
) -> None:
    declaration, source = next_turn_begun(store)
    recs = {
        "messages": messages_record("k", "0"),
        "literal_part": part_record("k", "0", b"[]", final=True),
        "prefix": prefix_record("k", "0", source),
        "prepared": prepared_record("k", "0"),
    }
    rec = recs[variant]
    assert append(store, declaration, rec) == SeedAppendResult(id="1", inserted=True)
    assert append(store, declaration, rec) == SeedAppendResult(id="1", inserted=False)


def test_append_exact_retry_after_publication_returns_its_original_id(store: Backend) -> None:
    prepared = prepare(store)
    for rec in prepared.records:
        original = replace(rec, id="")
        assert append(store, prepared.declaration, original) == SeedAppendResult(
            id=rec.id, inserted=False
        )


def test_append_exact_retry_after_the_run_started_returns_its_original_id(
    store: Backend,
) -> None:
    session = new_session(store)
    prepared = prepare(store, literal(session_id=session.id))
    run = seeded(run_start(run_id=prepared.run_id, session_id=session.id), prepared)
    store.start_root_run(run, started_record(run), canceled_record(run))
    first = replace(prepared.records[0], id="")
    assert append(store, prepared.declaration, first) == SeedAppendResult(id="1", inserted=False)


def test_literal_parts_may_cut_a_utf8_sequence_and_are_stored_byte_for_byte(
    store: Backend,
) -> None:
    whole = '[{"role":"user","parts":[{"kind":"text","text":"é"}],"meta":null}]'.encode()
    cut = whole.index("é".encode()) + 1  # inside the two bytes of "é"
    prepared = prepare(
        store,
        literal(),
        [
            {"literal_part": LiteralPart(data=whole[:cut], final=False)},
            {"literal_part": LiteralPart(data=whole[cut:], final=True)},
        ],
    )
    records = read_all_seed_records(store, prepared.run_id, prepared.seed_end_id)
    assert [r.literal_part for r in records] == [
        LiteralPart(data=whole[:cut], final=False),
        LiteralPart(data=whole[cut:], final=True),
    ]


def test_messages_are_stored_and_returned_byte_for_byte(store: Backend) -> None:
    text = (
        b'[ {"role" : "user", "parts":[{"kind":"text",'
        b'"text":"caf\\u00e9 \\"q\\""}],\n "meta":null} ]'
    )
    prepared = prepare(store, literal(), [{"messages": text}, {"messages": b"[]"}])
    records = read_all_seed_records(store, prepared.run_id, prepared.seed_end_id)
    assert [r.messages for r in records] == [text, b"[]"]


def test_prepared_bytes_are_opaque_and_stored_byte_for_byte(store: Backend) -> None:
    data = bytes(range(256))
    prepared = prepare(store, literal(), [], [data, b"\x00"])
    records = read_all_preparation_records(store, prepared.run_id, prepared.end_id)
    assert [r.prepared for r in records] == [data, b"\x00"]
    assert prepared.preparation.prepared_bytes == 257


def test_a_prefix_may_come_after_literal_messages(store: Backend) -> None:
    declaration, source = next_turn_begun(store)
    append(store, declaration, messages_record("a", "0"))
    assert append(store, declaration, prefix_record("b", "1", source)) == SeedAppendResult(
        id="2", inserted=True
    )


def test_messages_at_json_depth_128_are_accepted(store: Backend) -> None:
    declaration = begun(store)
    text = b"[" * 128 + b"]" * 128
    assert append(store, declaration, messages_record("a", "0", text)).inserted


# --- validation -----------------------------------------------------------------------------------


def _invalid_records() -> dict[str, SeedRecord]:
    ok = messages_record("k", "0")
    return {
        "key empty": replace(ok, key=""),
        "previous_id empty": replace(ok, previous_id=""),
        "id on input": replace(ok, id="1"),
        "no variant": SeedRecord(key="k", previous_id="0"),
        "messages and prepared": replace(ok, prepared=b"x"),
        "literal part and prefix": SeedRecord(
            key="k",
            previous_id="0",
            literal_part=LiteralPart(data=b"[", final=False),
            prefix=HistoryPrefix(run_id="r", end_id="1"),
        ),
        "messages empty": replace(ok, messages=b""),
        "messages not JSON": replace(ok, messages=b"[1,"),
        "messages an object": replace(ok, messages=b'{"role":"user"}'),
        "messages a string": replace(ok, messages=b'"[]"'),
        "messages null": replace(ok, messages=b"null"),
        "messages two values": replace(ok, messages=b"[] []"),
        "messages trailing bytes": replace(ok, messages=b"[]x"),
        "messages not UTF-8": replace(ok, messages=b'["\xff"]'),
        "messages deeper than 128": replace(ok, messages=b"[" * 129 + b"]" * 129),
        "literal part without data": SeedRecord(
            key="k", previous_id="0", literal_part=LiteralPart(data=b"", final=True)
        ),
        "prepared empty": SeedRecord(key="k", previous_id="0", prepared=b""),
        "key with a lone surrogate": replace(ok, key="k-\ud800"),
    }


INVALID = _invalid_records()


@pytest.mark.parametrize("case", list(INVALID))
def test_append_record_breaking_a_rule_is_invalid_argument(store: Backend, case: str) -> None:
    declaration = begun(store)
    append_rejected(store, declaration, INVALID[case], InvalidArgumentError, "invalid_argument")


@pytest.mark.parametrize("field", ["run_id", "attempt_id"])
def test_append_without_run_or_attempt_is_invalid_argument(store: Backend, field: str) -> None:
    declaration = begun(store)
    ids = {"run_id": declaration.run_id, "attempt_id": declaration.attempt_id, field: ""}
    expect_seed_rejected(
        store,
        lambda: store.append_run_seed(ids["run_id"], ids["attempt_id"], messages_record("k", "0")),
        InvalidArgumentError,
        "invalid_argument",
        declaration.run_id,
        watch=(declaration,),
    )


def test_append_validation_comes_before_the_attempt_lookup(store: Backend) -> None:
    declaration = literal()  # never begun
    append_rejected(
        store,
        declaration,
        replace(messages_record("k", "0"), messages=b"{}"),
        InvalidArgumentError,
        "invalid_argument",
        watch=(),
    )


# --- the command limit (15.1) ---------------------------------------------------------------------


def big_messages(declaration: SeedDeclaration, size: int, filler: str = "x") -> SeedRecord:
    """A messages record whose canonical append command is exactly ``size`` bytes.

    ``filler`` is one character of the message text; a quote costs 2 bytes in the messages
    text (``\\"``) and 4 in the command (the text is itself a JSON string there)."""
    per = {"x": 1, '"': 4, "é": 2}[filler]

    def build(n: int) -> SeedRecord:
        return messages_record("k", "0", msgs(filler * (n // per) + "x" * (n % per)))

    return sized(
        build, lambda r: append_command_size(declaration.run_id, declaration.attempt_id, r), size
    )


def test_append_command_of_exactly_one_million_bytes_is_accepted(store: Backend) -> None:
    declaration = begun(store)
    rec = big_messages(declaration, COMMAND_LIMIT)
    assert append(store, declaration, rec) == SeedAppendResult(id="1", inserted=True)


def test_append_command_of_one_million_and_one_bytes_is_payload_too_large(
    store: Backend,
) -> None:
    declaration = begun(store)
    rec = big_messages(declaration, COMMAND_LIMIT + 1)
    append_rejected(store, declaration, rec, PayloadTooLargeError, "payload_too_large")


def test_append_command_limit_counts_the_escapes_of_the_messages_text(store: Backend) -> None:
    """A messages text of about half a million bytes, mostly escaped quotes, is over the
    limit: its canonical command spells each ``\\"`` as ``\\\\\\"``."""
    declaration = begun(store)
    rec = big_messages(declaration, COMMAND_LIMIT + 1, filler='"')
    assert rec.messages is not None
    assert len(rec.messages) < 600_000
    append_rejected(store, declaration, rec, PayloadTooLargeError, "payload_too_large")


def test_append_command_limit_with_escaped_quotes_is_inclusive(store: Backend) -> None:
    declaration = begun(store)
    rec = big_messages(declaration, COMMAND_LIMIT, filler='"')
    assert append(store, declaration, rec).inserted
    append(store, declaration, prepared_record("p", "1"))
    store.publish_run_seed(
        declaration.run_id, declaration.attempt_id, "1", "2", len(b"compiled-start")
    )
    records = read_all_seed_records(store, declaration.run_id, "1")
    assert records == [stored(rec, "1")]


def test_append_command_limit_counts_utf8_bytes(store: Backend) -> None:
    declaration = begun(store)
    assert append(store, declaration, big_messages(declaration, COMMAND_LIMIT, filler="é")).inserted
    other = begun(store, attempt_of(declaration))
    rec = big_messages(other, COMMAND_LIMIT + 1, filler="é")
    append_rejected(store, other, rec, PayloadTooLargeError, "payload_too_large")


def _sized_bytes_record(declaration: SeedDeclaration, size: int, variant: str) -> SeedRecord:
    """A ``prepared`` or ``literal_part`` record of ``size`` canonical command bytes: base64
    grows by 4 characters per 3 bytes, so the key's length makes up the rest."""

    def measure(rec: SeedRecord) -> int:
        return append_command_size(declaration.run_id, declaration.attempt_id, rec)

    def make(key: str, data: bytes) -> SeedRecord:
        if variant == "prepared":
            return prepared_record(key, "0", data)
        return part_record(key, "0", data, final=True)

    data_len = 3 * ((size - 200) // 4)
    data = b"\xfb" * data_len
    base = measure(make("k", data))
    key = "k" * (1 + size - base)
    rec = make(key, data)
    assert measure(rec) == size
    return rec


@pytest.mark.parametrize("variant", ["prepared", "literal_part"])
def test_append_bytes_command_limit_is_inclusive(store: Backend, variant: str) -> None:
    declaration = begun(store)
    rec = _sized_bytes_record(declaration, COMMAND_LIMIT, variant)
    assert append(store, declaration, rec).inserted
    other = begun(store, attempt_of(declaration))
    too_big = _sized_bytes_record(other, COMMAND_LIMIT + 1, variant)
    append_rejected(store, other, too_big, PayloadTooLargeError, "payload_too_large")


def test_append_command_limit_comes_before_the_attempt_lookup(store: Backend) -> None:
    declaration = literal()  # never begun
    rec = big_messages(declaration, COMMAND_LIMIT + 1)
    append_rejected(store, declaration, rec, PayloadTooLargeError, "payload_too_large", watch=())


# --- step 1: the attempt exists -------------------------------------------------------------------


def test_append_to_a_run_id_without_seed_is_seed_not_found(store: Backend) -> None:
    declaration = literal()
    append_rejected(
        store, declaration, messages_record("k", "0"), SeedNotFoundError, "seed_not_found", watch=()
    )


def test_append_to_an_attempt_never_begun_is_seed_not_found(store: Backend) -> None:
    declaration = begun(store)
    other = attempt_of(declaration)
    expect_seed_rejected(
        store,
        lambda: append(store, other, messages_record("k", "0")),
        SeedNotFoundError,
        "seed_not_found",
        declaration.run_id,
        watch=(declaration,),
    )


# --- step 2: abandoned ----------------------------------------------------------------------------


def test_append_to_an_abandoned_attempt_is_preparation_abandoned(store: Backend) -> None:
    declaration = begun(store)
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    append_rejected(
        store,
        declaration,
        messages_record("k", "0"),
        PreparationAbandonedError,
        "preparation_abandoned",
        watch=(),
    )


def test_append_to_a_settlement_tombstone_is_preparation_abandoned(store: Backend) -> None:
    declaration = literal()
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    append_rejected(
        store,
        declaration,
        messages_record("k", "0"),
        PreparationAbandonedError,
        "preparation_abandoned",
        watch=(),
    )


def test_append_abandoned_comes_before_an_exact_retry(store: Backend) -> None:
    declaration = begun(store)
    rec = messages_record("k", "0")
    append(store, declaration, rec)
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    append_rejected(
        store, declaration, rec, PreparationAbandonedError, "preparation_abandoned", watch=()
    )


# --- step 3: the key ------------------------------------------------------------------------------


def _changed_under_key(source: HistoryPrefix) -> dict[str, tuple[SeedRecord, SeedRecord]]:
    part = part_record("k", "0", b"[]", final=True)
    pre = prefix_record("k", "0", source)
    return {
        "other previous_id": (messages_record("k", "0"), messages_record("k", "1")),
        "other messages": (messages_record("k", "0"), messages_record("k", "0", msgs("other"))),
        "other variant": (messages_record("k", "0"), prepared_record("k", "0")),
        "other part data": (part, part_record("k", "0", b"[ ]", final=True)),
        "other final flag": (
            part_record("k", "0", b"[", final=False),
            part_record("k", "0", b"[", final=True),
        ),
        "other prefix exclusion": (
            pre,
            prefix_record("k", "0", replace(source, exclude_reasoning=True)),
        ),
        "other prepared bytes": (prepared_record("k", "0", b"a"), prepared_record("k", "0", b"b")),
    }


CHANGED_CASES = [
    "other previous_id",
    "other messages",
    "other variant",
    "other part data",
    "other final flag",
    "other prefix exclusion",
    "other prepared bytes",
]


@pytest.mark.parametrize("case", CHANGED_CASES)
def test_append_under_a_stored_key_with_other_content_is_seed_conflict(
    store: Backend, case: str
) -> None:
    declaration, source = next_turn_begun(store)
    first, changed = _changed_under_key(source)[case]
    append(store, declaration, first)
    append_rejected(store, declaration, changed, SeedConflictError, "seed_conflict")


def test_append_changed_under_a_key_after_publication_is_seed_conflict(store: Backend) -> None:
    prepared = prepare(store)
    changed = replace(prepared.records[0], id="", messages=msgs("changed"))
    expect_seed_rejected(
        store,
        lambda: append(store, prepared.declaration, changed),
        SeedConflictError,
        "seed_conflict",
        prepared.run_id,
        watch=(prepared,),
    )


# --- step 4: published ----------------------------------------------------------------------------


def test_append_after_publication_is_seed_conflict(store: Backend) -> None:
    prepared = prepare(store)
    rec = prepared_record("new", prepared.end_id)
    expect_seed_rejected(
        store,
        lambda: append(store, prepared.declaration, rec),
        SeedConflictError,
        "seed_conflict",
        prepared.run_id,
        watch=(prepared,),
    )


# --- step 5: the exact predecessor ----------------------------------------------------------------


@pytest.mark.parametrize("previous_id", ["0", "1", "3", "02", "x"])
def test_append_after_a_position_other_than_the_body_end_is_seed_conflict(
    store: Backend, previous_id: str
) -> None:
    declaration = begun(store)
    append_chain(store, declaration, [{"messages": msgs("a")}, {"messages": msgs("b")}])
    rec = messages_record("late", previous_id)
    append_rejected(store, declaration, rec, SeedConflictError, "seed_conflict")


def test_first_append_must_follow_position_zero(store: Backend) -> None:
    declaration = begun(store)
    append_rejected(
        store, declaration, messages_record("k", "1"), SeedConflictError, "seed_conflict"
    )


def test_append_after_the_body_end_past_prepared_records(store: Backend) -> None:
    declaration = begun(store)
    append_chain(store, declaration, [{"messages": msgs()}, {"prepared": b"a"}])
    append_rejected(
        store, declaration, prepared_record("p", "1"), SeedConflictError, "seed_conflict"
    )
    assert append(store, declaration, prepared_record("p", "2")).id == "3"


# --- step 6: an open literal ----------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["messages", "prefix", "prepared"])
def test_append_other_than_a_literal_part_while_a_literal_is_open_is_seed_conflict(
    store: Backend, variant: str
) -> None:
    declaration, source = next_turn_begun(store)
    append(store, declaration, part_record("p1", "0", b"[{", final=False))
    rec = {
        "messages": messages_record("k", "1"),
        "prefix": prefix_record("k", "1", source),
        "prepared": prepared_record("k", "1"),
    }[variant]
    append_rejected(store, declaration, rec, SeedConflictError, "seed_conflict")


def test_literal_parts_continue_an_open_literal_until_final(store: Backend) -> None:
    declaration = begun(store)
    append(store, declaration, part_record("p1", "0", b"[", final=False))
    append(store, declaration, part_record("p2", "1", b"]", final=False))
    append(store, declaration, part_record("p3", "2", b" ", final=True))
    assert append(store, declaration, messages_record("m", "3")).id == "4"
    assert store.begin_run_seed(declaration).end_id == "4"


# --- step 7: the compiled start comes last --------------------------------------------------------


@pytest.mark.parametrize("variant", ["messages", "literal_part", "prefix"])
def test_history_after_a_prepared_record_is_seed_conflict(store: Backend, variant: str) -> None:
    declaration, source = next_turn_begun(store)
    append(store, declaration, prepared_record("p", "0"))
    rec = {
        "messages": messages_record("k", "1"),
        "literal_part": part_record("k", "1", b"[]", final=True),
        "prefix": prefix_record("k", "1", source),
    }[variant]
    append_rejected(store, declaration, rec, SeedConflictError, "seed_conflict")


def test_prepared_records_may_follow_each_other(store: Backend) -> None:
    declaration = begun(store)
    append(store, declaration, prepared_record("p1", "0"))
    assert append(store, declaration, prepared_record("p2", "1")).id == "2"


# --- step 8: the prefix ---------------------------------------------------------------------------


def test_a_second_prefix_is_seed_conflict(store: Backend) -> None:
    declaration, source = next_turn_begun(store)
    append(store, declaration, prefix_record("a", "0", source))
    append_rejected(
        store, declaration, prefix_record("b", "1", source), SeedConflictError, "seed_conflict"
    )


def _other_prefixes(source: HistoryPrefix) -> dict[str, HistoryPrefix]:
    return {
        "run_id": replace(source, run_id="run-other"),
        "end_id": replace(source, end_id="2"),
        "exclude_system": replace(source, exclude_system=not source.exclude_system),
        "exclude_reasoning": replace(source, exclude_reasoning=not source.exclude_reasoning),
    }


@pytest.mark.parametrize("field", ["run_id", "end_id", "exclude_system", "exclude_reasoning"])
def test_a_prefix_other_than_the_source_is_seed_conflict(store: Backend, field: str) -> None:
    declaration, source = next_turn_begun(store)
    assert source.end_id == NEXT_TURN_END
    rec = prefix_record("a", "0", _other_prefixes(source)[field])
    append_rejected(store, declaration, rec, SeedConflictError, "seed_conflict")


def test_a_prefix_in_a_literal_seed_is_seed_conflict(store: Backend) -> None:
    source = completed_source(store, new_session(store).id)
    declaration = begun(store, literal(session_id=source.session_id))
    prefix = HistoryPrefix(run_id=source.run_id, end_id=NEXT_TURN_END, exclude_system=True)
    append_rejected(
        store, declaration, prefix_record("a", "0", prefix), SeedConflictError, "seed_conflict"
    )


def test_the_prefix_equal_to_the_source_is_accepted(store: Backend) -> None:
    declaration, source = next_turn_begun(store)
    assert append(store, declaration, prefix_record("a", "0", source)) == SeedAppendResult(
        id="1", inserted=True
    )
    assert store.begin_run_seed(declaration) == RunSeed(
        declaration=declaration, source=source, end_id="1"
    )
