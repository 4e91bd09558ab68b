"""Issue 33, item 3: a token key that matches none of the stored tokens is found out.

The database keeps a check value of the key (an HMAC of a fixed label, in
``service_keys``). It is recorded with the first token, compared at every start, and
replaced only when no active token would be orphaned; a database whose tokens predate it
records it once the key is proven (the bootstrap token, or a token that authenticates).
On both databases.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.tokens import Role, TokenError
from app.storage.access.tokens import KEY_CHECK_NAME, Tokens
from app.storage.database.tables import service_keys

KEY = "token-key-check-right-key-0123456789"
OTHER = "token-key-check-wrong-key-9876543210"


def stored_check(engine: Engine) -> bytes | None:
    with engine.connect() as conn:
        return conn.execute(
            sa.select(service_keys.c.secret).where(service_keys.c.name == KEY_CHECK_NAME)
        ).scalar_one_or_none()


def forget_check(engine: Engine) -> None:
    """As a database whose tokens were created before the check value existed."""
    with engine.begin() as conn:
        conn.execute(service_keys.delete().where(service_keys.c.name == KEY_CHECK_NAME))


@pytest.fixture
def clean(engine: Engine) -> Engine:
    forget_check(engine)  # ``wipe`` keeps the service keys
    return engine


def test_the_first_token_records_the_check_and_another_key_is_a_mismatch(clean: Engine) -> None:
    Tokens(clean, KEY).create("ops", Role.ADMIN)
    check = stored_check(clean)
    assert check is not None
    assert KEY.encode() not in check  # a check value, never the key
    assert Tokens(clean, KEY).check_key() == "match"
    assert Tokens(clean, OTHER).check_key() == "mismatch"
    assert stored_check(clean) == check  # a mismatch changes nothing


def test_a_token_under_another_key_is_refused_while_active_tokens_exist(clean: Engine) -> None:
    Tokens(clean, KEY).create("ops", Role.ADMIN)
    with pytest.raises(TokenError, match="not the key the 1 active token"):
        Tokens(clean, OTHER).create("ci", Role.WORKER)
    with pytest.raises(TokenError, match="not the key the 1 active token"):
        Tokens(clean, OTHER).ensure("bootstrap-admin", Role.ADMIN, "rst_" + "x" * 40)
    assert [info.name for info in Tokens(clean, KEY).list()] == ["ops"]


def test_revoking_every_token_lets_a_new_key_start_over(clean: Engine) -> None:
    Tokens(clean, KEY).create("ops", Role.ADMIN)
    Tokens(clean, KEY).revoke("ops")
    assert Tokens(clean, OTHER).check_key() == "recorded"
    token = Tokens(clean, OTHER).create("ci", Role.WORKER)
    assert Tokens(clean, OTHER).authenticate(token) == ("ci", Role.WORKER)
    assert Tokens(clean, KEY).check_key() == "mismatch"


def test_tokens_that_predate_the_check_record_it_at_the_first_authentication(
    clean: Engine,
) -> None:
    token = Tokens(clean, KEY).create("ops", Role.ADMIN)
    forget_check(clean)
    assert Tokens(clean, OTHER).check_key() == "unproven"
    assert Tokens(clean, OTHER).authenticate(token) is None
    assert stored_check(clean) is None  # a key nothing proved is not recorded
    assert Tokens(clean, KEY).check_key() == "unproven"
    assert Tokens(clean, KEY).authenticate(token) == ("ops", Role.ADMIN)
    assert Tokens(clean, KEY).check_key() == "match"
    assert Tokens(clean, OTHER).check_key() == "mismatch"


def test_the_bootstrap_token_proves_the_key_of_tokens_that_predate_the_check(
    clean: Engine,
) -> None:
    bootstrap = "rst_" + "b" * 43
    assert Tokens(clean, KEY).ensure("bootstrap-admin", Role.ADMIN, bootstrap) == "created"
    forget_check(clean)
    assert Tokens(clean, KEY).ensure("bootstrap-admin", Role.ADMIN, bootstrap) == "present"
    assert Tokens(clean, OTHER).check_key() == "mismatch"
