"""Label filters read alike by the API, the clients and the operator CLI (CONTRACT.md 11.1)."""

from __future__ import annotations

import pytest

from runtime_store_client import InvalidArgumentError
from runtime_store_client.filters import label_filters


def test_a_label_filters_key_ends_at_the_first_colon() -> None:
    assert label_filters(["url:https://x:8080", "team:"]) == {"url": "https://x:8080", "team": ""}


@pytest.mark.parametrize("bad", ["nocolon", ":value", ""])
def test_a_label_filter_without_key_or_colon_is_invalid_argument(bad: str) -> None:
    with pytest.raises(InvalidArgumentError):
        label_filters([bad])


def test_two_values_for_one_key_match_nothing() -> None:
    assert label_filters(["a:1", "a:1"]) == {"a": "1"}
    assert label_filters(["a:1", "a:2"]) is None
