"""Reading a published seed (CONTRACT.md 15.4, with the page bound of 15.1).

``load_run_seed`` at the exact history end; ``list_run_seed_records`` (history records only)
and ``list_run_preparation_records`` (``prepared`` records only, at the exact body end);
``seed_not_found`` before any declaration, ``seed_not_published`` before a publication;
pages of at most 512 records and 1,048,576 bytes, ``after`` an exact ID of the range.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace

import pytest

from runtime_store_client import (
    InvalidArgumentError,
    InvalidTranscriptPositionError,
    LiteralPart,
    RunSeed,
    SeedConflictError,
    SeedNotFoundError,
    SeedNotPublishedError,
    SeedPage,
    SeedRecord,
    StoreError,
)
from tests.contract.builders import Backend, new_session
from tests.contract.seed_builders import (
    COMMAND_LIMIT,
    PAGE_BYTES,
    Prepared,
    append_command_size,
    begin_and_append,
    completed_source,
    literal,
    messages_record,
    msgs,
    next_turn,
    operation_of,
    page_size,
    prepare,
    prepared_record,
    read_all_preparation_records,
    read_all_seed_records,
    sized,
    source_of,
    stored,
)

#: The three reads, each at the end it must name.
READS: dict[str, Callable[[Backend, str, str], object]] = {
    "load": lambda s, run_id, end: s.load_run_seed(run_id, end),
    "seed records": lambda s, run_id, end: s.list_run_seed_records(run_id, end),
    "preparation records": lambda s, run_id, end: s.list_run_preparation_records(run_id, end),
}


def mixed(store: Backend) -> Prepared:
    """History 1 messages, 2 literal part, 3 literal part (final), 4 messages; then 5, 6
    prepared. History end "4", body end "6"."""
    return prepare(
        store,
        literal(),
        [
            {"messages": msgs("a")},
            {"literal_part": LiteralPart(data=b'[{"role":"user",', final=False)},
            {"literal_part": LiteralPart(data=b'"parts":[],"meta":null}]', final=True)},
            {"messages": msgs("b", "assistant")},
        ],
        [b"\x00compiled", b"-start\xff"],
    )


def end_for(read: str, prepared: Prepared) -> str:
    return prepared.end_id if read == "preparation records" else prepared.seed_end_id


def rejected(call: Callable[[], object], error: type[StoreError], code: str) -> StoreError:
    with pytest.raises(error) as info:
        call()
    assert info.value.code == code
    assert info.value.status == error.default_status
    return info.value


# --- load -----------------------------------------------------------------------------------------


def test_load_returns_the_published_seed(store: Backend) -> None:
    prepared = mixed(store)
    assert store.load_run_seed(prepared.run_id, "4") == RunSeed(
        declaration=prepared.declaration, source=None, end_id="4"
    )


def test_load_of_a_next_turn_returns_its_source(store: Backend) -> None:
    source = completed_source(store, new_session(store).id)
    prepared = prepare(store, next_turn(source))
    seed = store.load_run_seed(prepared.run_id, prepared.seed_end_id)
    assert seed == prepared.preparation.seed
    assert seed.source == source_of(prepared.declaration, "3")
    assert seed.declaration.agent_id == source.agent_id
    assert seed.declaration.session_id == source.session_id


def test_load_at_the_body_end_is_seed_conflict(store: Backend) -> None:
    prepared = mixed(store)
    rejected(lambda: store.load_run_seed(prepared.run_id, "6"), SeedConflictError, "seed_conflict")


@pytest.mark.parametrize("end", ["0", "3", "5", "04", "99", "x"])
def test_load_at_a_position_other_than_the_history_end_is_seed_conflict(
    store: Backend, end: str
) -> None:
    prepared = mixed(store)
    rejected(lambda: store.load_run_seed(prepared.run_id, end), SeedConflictError, "seed_conflict")


def test_load_of_a_seed_with_an_empty_history_is_at_position_zero(store: Backend) -> None:
    prepared = prepare(store, literal(), [], [b"start"])
    assert store.load_run_seed(prepared.run_id, "0") == prepared.preparation.seed
    assert store.list_run_seed_records(prepared.run_id, "0") == SeedPage(records=[], next_cursor="")


# --- common answers -------------------------------------------------------------------------------


@pytest.mark.parametrize("read", list(READS))
def test_read_without_its_end_is_invalid_argument(store: Backend, read: str) -> None:
    prepared = mixed(store)
    rejected(
        lambda: READS[read](store, prepared.run_id, ""), InvalidArgumentError, "invalid_argument"
    )


@pytest.mark.parametrize("read", list(READS))
def test_read_of_a_run_id_without_seed_is_seed_not_found(store: Backend, read: str) -> None:
    rejected(
        lambda: READS[read](store, "run-without-seed", "1"), SeedNotFoundError, "seed_not_found"
    )


@pytest.mark.parametrize("read", list(READS))
def test_read_of_a_run_id_with_only_a_settlement_tombstone_is_seed_not_found(
    store: Backend, read: str
) -> None:
    declaration = literal()
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    rejected(
        lambda: READS[read](store, declaration.run_id, "1"), SeedNotFoundError, "seed_not_found"
    )


@pytest.mark.parametrize("read", list(READS))
def test_read_of_a_declared_seed_not_published_is_seed_not_published(
    store: Backend, read: str
) -> None:
    declaration = literal()
    begin_and_append(store, declaration)  # 1 messages, 2 prepared
    for end in ("0", "1", "2"):
        rejected(
            functools.partial(READS[read], store, declaration.run_id, end),
            SeedNotPublishedError,
            "seed_not_published",
        )


@pytest.mark.parametrize("read", list(READS))
def test_read_of_an_abandoned_seed_is_seed_not_published(store: Backend, read: str) -> None:
    declaration = literal()
    begin_and_append(store, declaration)
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    rejected(
        lambda: READS[read](store, declaration.run_id, "1"),
        SeedNotPublishedError,
        "seed_not_published",
    )


@pytest.mark.parametrize("read", list(READS))
def test_unpublished_attempts_are_never_readable(store: Backend, read: str) -> None:
    """Another attempt's longer chain stays invisible beside the published one."""
    declaration = literal()
    begin_and_append(store, declaration, [{"messages": msgs("x")} for _ in range(3)], [b"a", b"b"])
    prepared = prepare(store, replace(declaration, attempt_id="att-published"))
    assert prepared.seed_end_id == "1"
    rejected(lambda: READS[read](store, prepared.run_id, "3"), SeedConflictError, "seed_conflict")
    assert READS[read](store, prepared.run_id, end_for(read, prepared)) is not None


# --- the two lists --------------------------------------------------------------------------------


def test_seed_records_are_the_published_history_in_position_order(store: Backend) -> None:
    prepared = mixed(store)
    page = store.list_run_seed_records(prepared.run_id, "4")
    assert page == SeedPage(records=prepared.history, next_cursor="")
    assert [r.id for r in page.records] == ["1", "2", "3", "4"]


def test_seed_records_come_in_their_wire_shape_with_exact_bytes(store: Backend) -> None:
    prepared = mixed(store)
    first, second, third, fourth = store.list_run_seed_records(prepared.run_id, "4").records
    assert first == SeedRecord(id="1", key="k1", previous_id="0", messages=msgs("a"))
    assert second == SeedRecord(
        id="2",
        key="k2",
        previous_id="1",
        literal_part=LiteralPart(data=b'[{"role":"user",', final=False),
    )
    assert third.literal_part == LiteralPart(data=b'"parts":[],"meta":null}]', final=True)
    assert (third.messages, third.prefix, third.prepared) == (None, None, None)
    assert fourth.messages == msgs("b", "assistant")


def test_seed_records_chain_from_zero_to_the_history_end(store: Backend) -> None:
    prepared = mixed(store)
    records = read_all_seed_records(store, prepared.run_id, "4")
    assert [r.previous_id for r in records] == ["0", "1", "2", "3"]
    assert records[-1].id == prepared.seed_end_id


def test_preparation_records_are_the_published_prepared_records_only(store: Backend) -> None:
    prepared = mixed(store)
    page = store.list_run_preparation_records(prepared.run_id, "6")
    assert page == SeedPage(records=prepared.compiled, next_cursor="")
    assert page.records == [
        SeedRecord(id="5", key="k5", previous_id="4", prepared=b"\x00compiled"),
        SeedRecord(id="6", key="k6", previous_id="5", prepared=b"-start\xff"),
    ]


def test_seed_records_include_the_prefix_record(store: Backend) -> None:
    source = completed_source(store, new_session(store).id)
    prepared = prepare(store, next_turn(source))
    records = store.list_run_seed_records(prepared.run_id, prepared.seed_end_id).records
    assert records == prepared.history
    assert records[0].prefix == prepared.preparation.seed.source


def test_preparation_list_at_the_history_end_is_seed_conflict(store: Backend) -> None:
    prepared = mixed(store)
    rejected(
        lambda: store.list_run_preparation_records(prepared.run_id, "4"),
        SeedConflictError,
        "seed_conflict",
    )


def test_seed_list_at_the_body_end_is_seed_conflict(store: Backend) -> None:
    prepared = mixed(store)
    rejected(
        lambda: store.list_run_seed_records(prepared.run_id, "6"),
        SeedConflictError,
        "seed_conflict",
    )


def test_the_same_arguments_give_the_same_page(store: Backend) -> None:
    prepared = mixed(store)
    first = store.list_run_seed_records(prepared.run_id, "4", after="1", limit=2)
    store.settle_run_preparation(operation_of(prepared.declaration), "att-late")
    assert store.list_run_seed_records(prepared.run_id, "4", after="1", limit=2) == first


# --- paging ---------------------------------------------------------------------------------------


def test_pages_follow_next_cursor_to_the_end(store: Backend) -> None:
    prepared = mixed(store)
    pages = [store.list_run_seed_records(prepared.run_id, "4", limit=3)]
    assert pages[0].next_cursor == "3"
    pages.append(store.list_run_seed_records(prepared.run_id, "4", after="3", limit=3))
    assert pages[1] == SeedPage(records=prepared.history[3:], next_cursor="")
    assert [r.id for p in pages for r in p.records] == ["1", "2", "3", "4"]


def test_a_page_ending_on_the_last_record_has_no_cursor(store: Backend) -> None:
    prepared = mixed(store)
    page = store.list_run_seed_records(prepared.run_id, "4", after="2", limit=2)
    assert page == SeedPage(records=prepared.history[2:], next_cursor="")


def test_after_the_last_record_is_an_empty_page(store: Backend) -> None:
    prepared = mixed(store)
    assert store.list_run_seed_records(prepared.run_id, "4", after="4") == SeedPage(
        records=[], next_cursor=""
    )
    assert store.list_run_preparation_records(prepared.run_id, "6", after="6") == SeedPage(
        records=[], next_cursor=""
    )


def test_preparation_pages_follow_next_cursor(store: Backend) -> None:
    prepared = mixed(store)
    first = store.list_run_preparation_records(prepared.run_id, "6", limit=1)
    assert first == SeedPage(records=prepared.compiled[:1], next_cursor="5")
    second = store.list_run_preparation_records(prepared.run_id, "6", after="5", limit=1)
    assert second == SeedPage(records=prepared.compiled[1:], next_cursor="")


@pytest.mark.parametrize("limit", [0, -1])
@pytest.mark.parametrize("read", ["seed records", "preparation records"])
def test_limit_below_one_is_invalid_transcript_position(
    store: Backend, read: str, limit: int
) -> None:
    prepared = mixed(store)
    lists = {
        "seed records": lambda: store.list_run_seed_records(prepared.run_id, "4", limit=limit),
        "preparation records": lambda: store.list_run_preparation_records(
            prepared.run_id, "6", limit=limit
        ),
    }
    rejected(lists[read], InvalidTranscriptPositionError, "invalid_transcript_position")


def test_limit_is_checked_before_the_end(store: Backend) -> None:
    prepared = mixed(store)
    rejected(
        lambda: store.list_run_seed_records(prepared.run_id, "6", limit=0),
        InvalidTranscriptPositionError,
        "invalid_transcript_position",
    )


@pytest.mark.parametrize("after", ["0", "01", "5", "6", "7", "99", "x", "-1"])
def test_seed_list_after_a_position_outside_the_history_is_invalid_transcript_position(
    store: Backend, after: str
) -> None:
    prepared = mixed(store)
    rejected(
        lambda: store.list_run_seed_records(prepared.run_id, "4", after=after),
        InvalidTranscriptPositionError,
        "invalid_transcript_position",
    )


@pytest.mark.parametrize("after", ["0", "1", "4", "05", "7", "x"])
def test_preparation_list_after_a_position_outside_its_range_is_invalid_transcript_position(
    store: Backend, after: str
) -> None:
    """A history record's ID (``"1"``, ``"4"``) is not a position of the preparation list."""
    prepared = mixed(store)
    rejected(
        lambda: store.list_run_preparation_records(prepared.run_id, "6", after=after),
        InvalidTranscriptPositionError,
        "invalid_transcript_position",
    )


def test_limit_above_512_is_served_as_512_and_defaults_to_100(store: Backend) -> None:
    prepared = prepare(store, literal(), [{"messages": b"[]"} for _ in range(514)])
    first = store.list_run_seed_records(prepared.run_id, "514", limit=10_000)
    assert [r.id for r in first.records] == [str(n) for n in range(1, 513)]
    assert first.next_cursor == "512"
    rest = store.list_run_seed_records(prepared.run_id, "514", after="512", limit=513)
    assert rest == SeedPage(records=prepared.history[512:], next_cursor="")
    default = store.list_run_seed_records(prepared.run_id, "514")
    assert len(default.records) == 100
    assert default.next_cursor == "100"


# --- the page bound (1,048,576 bytes, inclusive) --------------------------------------------------


def two_big_messages(excess: int) -> list[SeedRecord]:
    """Records 1 (about 600 kB) and 2 whose one page measures ``PAGE_BYTES + excess``."""
    first = stored(messages_record("k1", "0", msgs("a" * 600_000)), "1")

    def build(n: int) -> list[SeedRecord]:
        return [first, stored(messages_record("k2", "1", msgs("b" * n)), "2")]

    return sized(build, page_size, PAGE_BYTES + excess)


def test_a_page_of_exactly_the_byte_bound_holds_both_records(store: Backend) -> None:
    records = two_big_messages(0)
    prepared = prepare(
        store, literal(), [{"messages": r.messages} for r in records] + [{"messages": b"[]"}]
    )
    assert prepared.history[:2] == records
    page = store.list_run_seed_records(prepared.run_id, "3")
    assert page == SeedPage(records=records, next_cursor="2")
    assert page_size(page.records) == PAGE_BYTES


def test_a_page_stops_before_the_record_that_would_pass_the_byte_bound(store: Backend) -> None:
    records = two_big_messages(1)
    prepared = prepare(store, literal(), [{"messages": r.messages} for r in records])
    first = store.list_run_seed_records(prepared.run_id, "2", limit=512)
    assert first == SeedPage(records=records[:1], next_cursor="1")
    second = store.list_run_seed_records(prepared.run_id, "2", after="1", limit=512)
    assert second == SeedPage(records=records[1:], next_cursor="")


def test_a_record_at_the_command_limit_fits_a_page_alone(store: Backend) -> None:
    declaration = literal()

    def build(n: int) -> SeedRecord:
        return messages_record("k1", "0", msgs("x" * n))

    rec = sized(
        build,
        lambda r: append_command_size(declaration.run_id, declaration.attempt_id, r),
        COMMAND_LIMIT,
    )
    assert rec.messages is not None
    prepared = prepare(store, declaration, [{"messages": rec.messages}] * 2)
    first = store.list_run_seed_records(prepared.run_id, "2")
    assert first == SeedPage(records=[stored(rec, "1")], next_cursor="1")
    second = store.list_run_seed_records(prepared.run_id, "2", after="1")
    assert [r.id for r in second.records] == ["2"]


def two_big_prepared(run_id: str, excess: int) -> list[SeedRecord]:
    """Prepared records 2 and 3 (after one history record) whose page measures
    ``PAGE_BYTES + excess``: the second record's key makes up the exact size."""
    first = stored(prepared_record("k2", "1", b"\x01" * 450_000), "2")  # 600,000 base64
    data = b"\x02" * 330_000  # 440,000 base64

    def build(n: int) -> list[SeedRecord]:
        return [first, stored(prepared_record("k" * (n + 1), "2", data), "3")]

    del run_id
    return sized(build, page_size, PAGE_BYTES + excess)


@pytest.mark.parametrize("excess", [0, 1])
def test_preparation_pages_keep_the_byte_bound(store: Backend, excess: int) -> None:
    declaration = literal()
    store.begin_run_seed(declaration)
    big = two_big_prepared(declaration.run_id, excess)
    records = [stored(messages_record("k1", "0"), "1"), *big]
    for rec in records:
        store.append_run_seed(declaration.run_id, declaration.attempt_id, replace(rec, id=""))
    total = sum(len(r.prepared or b"") for r in big)
    store.publish_run_seed(declaration.run_id, declaration.attempt_id, "1", "3", total)
    page = store.list_run_preparation_records(declaration.run_id, "3")
    if excess == 0:
        assert page == SeedPage(records=big, next_cursor="")
    else:
        assert page == SeedPage(records=big[:1], next_cursor="2")
        rest = store.list_run_preparation_records(declaration.run_id, "3", after="2")
        assert rest == SeedPage(records=big[1:], next_cursor="")
    assert read_all_preparation_records(store, declaration.run_id, "3") == big
