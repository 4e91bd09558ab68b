"""Fixtures of the reliability tests: a database of each test's own on the test cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .cluster import Database, fresh_database


@pytest.fixture
def database(postgres_url: str) -> Iterator[Database]:
    """A fresh database at head on the cluster of ``postgres_url``, dropped afterwards."""
    with fresh_database(postgres_url) as created:
        yield created
