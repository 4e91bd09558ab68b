"""``GET /v1/runs/{id}/transcript`` composes a seeded run's history (CONTRACT.md 15.6): its
first page begins with what the run inherits from its seed, composed by the client's helper,
and validation checks the whole composed history."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.main import create_app
from app.settings import Settings
from app.storage import SqlStore
from runtime_store_client import (
    Message,
    TranscriptRule,
    build_messages_from_run_log,
    build_seed_history,
    decode_message,
    encode_message,
)
from tests.contract.builders import new_session
from tests.transcript.samples import assistant, result, system, text, use, user
from tests.transcript.seeding import complete, next_turn, say, start_run

TURN_1 = [system(text("Be brief.")), user(text("turn 1")), assistant(text("answer 1"))]
TURN_2_ASK = [user(text("turn 2"))]
TURN_2_OWN = [assistant(use("toolu_1")), user(result("toolu_1")), assistant(text("answer 2"))]


def _client(engine: Engine, **settings: Any) -> TestClient:
    url = engine.url.render_as_string(hide_password=False)
    return TestClient(create_app(Settings(database_url=url, **settings)))


def _messages(body: dict[str, Any]) -> list[Message]:
    return [decode_message(item) for item in body["messages"]]


def _second_turn(store: SqlStore) -> str:
    session_id = new_session(store).id
    first = start_run(store, session_id)
    say(store, first, *TURN_1)
    complete(store, first)
    second = next_turn(store, session_id, first, [], TURN_2_ASK)
    for message in TURN_2_OWN:
        say(store, second, message)
    return second.run_id


def test_the_first_page_begins_with_the_seeds_history(engine: Engine) -> None:
    store = SqlStore(engine)
    run_id = _second_turn(store)
    inherited = [*TURN_1[1:], *TURN_2_ASK]  # a next_turn leaves out the system messages
    assert build_seed_history(store, run_id).messages == inherited
    url = f"/v1/runs/{run_id}/transcript"
    with _client(engine) as api:
        whole = api.get(url).json()
        assert _messages(whole) == [*inherited, *TURN_2_OWN]
        assert whole["next_cursor"] == ""
        # Paged: the inherited history comes once, on the first page, and the pages
        # joined are the run's history as the client's replay composes it.
        pages: list[Message] = []
        cursor = ""
        first = api.get(url, params={"limit": 2}).json()
        assert _messages(first) == [*inherited, TURN_2_OWN[0]]  # run_started, one record
        while True:
            body = api.get(url, params={"limit": 2, "cursor": cursor}).json()
            pages += _messages(body)
            cursor = body["next_cursor"]
            if not cursor:
                break
        assert pages == build_messages_from_run_log(store, run_id) == [*inherited, *TURN_2_OWN]
        later = api.get(url, params={"limit": 2, "cursor": "2"}).json()
        assert _messages(later) == TURN_2_OWN[1:]  # records 3 and 4: no inherited message


def test_validation_checks_the_composed_history(engine: Engine) -> None:
    store = SqlStore(engine)
    session_id = new_session(store).id
    first = start_run(store, session_id)
    say(store, first, user(text("go")), assistant(use("toolu_1")))
    complete(store, first)
    # The call of turn 1 is answered by turn 2's seed: valid only when composed.
    second = next_turn(store, session_id, first, [], [user(result("toolu_1"))])
    say(store, second, assistant(use("toolu_2")))  # left unanswered: message 3
    url = f"/v1/runs/{second.run_id}/transcript"
    with _client(engine) as api:
        for params in ({"validate": "planner"}, {"validate": "planner", "limit": 1}):
            refused = api.get(url, params=params)
            assert refused.status_code == 422, refused.text
            violations = refused.json()["violations"]
            assert [(v["index"], v["rule"]) for v in violations] == [
                (3, str(TranscriptRule.TOOL_USE_NOT_FOLLOWED_BY_USER))
            ]


def test_a_seed_history_beyond_the_bound_is_payload_too_large(engine: Engine) -> None:
    store = SqlStore(engine)
    run_id = _second_turn(store)
    url = f"/v1/runs/{run_id}/transcript"
    # Reading the seed's history reads turn 1's transcript record and the seed's two records.
    with _client(engine, max_transcript_records=2) as api:
        refused = api.get(url)
        assert refused.status_code == 413
        assert refused.json()["code"] == "payload_too_large"
        assert "composing the history inherited from the seed" in refused.json()["detail"]
        # Later pages read the run's own records only.
        assert api.get(url, params={"cursor": "1"}).status_code == 200
    with _client(engine, max_transcript_records=3) as api:
        assert api.get(url).status_code == 200


def test_a_run_without_a_seed_pages_as_before(engine: Engine) -> None:
    store = SqlStore(engine)
    run = start_run(store, new_session(store).id)
    say(store, run, *TURN_1)
    with _client(engine) as api:
        body = api.get(f"/v1/runs/{run.run_id}/transcript").json()
    assert body == {"messages": [encode_message(m) for m in TURN_1], "next_cursor": ""}
