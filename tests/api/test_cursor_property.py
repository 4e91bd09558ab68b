"""Property: any bytes as a cursor on any list endpoint answer 200 or 422, never 5xx
(CONTRACT.md section 4: however a cursor was forged, the answer is invalid_argument)."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote_from_bytes

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.wire_builders import append, create_session, note, start_root

_JSON_SCALARS = st.one_of(
    st.integers(),  # unbounded: beyond 64 bits too
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.text(max_size=12),
    st.sampled_from(["\ud800", "a\udfffb", "\x00", "sess", "run"]),
)
_JSON_VALUES = st.recursive(_JSON_SCALARS, lambda inner: st.lists(inner, max_size=5), max_leaves=12)


def _b64(text: str) -> bytes:
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=")


#: Raw bytes, and cursor-shaped garbage that gets past the base64 step: JSON of the kinds
#: the store issues with arbitrary fields (huge numbers, lone surrogates, NUL, nesting),
#: and deep nesting.
CURSORS = st.one_of(
    st.binary(max_size=300),
    st.binary(max_size=300).map(lambda raw: base64.urlsafe_b64encode(raw).rstrip(b"=")),
    st.tuples(
        st.sampled_from(["sr2", "sn2", "sr1", "sn1", "x"]), st.lists(_JSON_VALUES, max_size=5)
    )
    .map(lambda kind_fields: [kind_fields[0], *kind_fields[1]])
    .map(lambda value: _b64(json.dumps(value))),
    st.integers(0, 3_000).map(lambda depth: _b64("[" * depth + "]" * depth)),
)


def test_any_bytes_as_a_cursor_answer_200_or_422_on_every_list(api: TestClient) -> None:
    session_id = create_session(api)
    run = start_root(api, session_id)
    append(api, note(run, "k1"))
    lists = [
        f"/v1/sessions/{session_id}/runs",
        f"/v1/sessions/{session_id}/records",
        f"/v1/runs/{run.run_id}/records",
        f"/v1/runs/{run.run_id}/transcript",
    ]

    @settings(
        max_examples=150,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(cursor=CURSORS, which=st.sampled_from(lists))
    def one(cursor: bytes, which: str) -> None:
        response = api.get(f"{which}?cursor={quote_from_bytes(cursor, safe='')}")
        assert response.status_code in (200, 422), (cursor, which, response.text[:300])
        if response.status_code == 422:
            assert response.json()["code"] == "invalid_argument"

    one()
