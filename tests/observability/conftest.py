"""Loaded before the test modules: the API tests' conftest registers the assertion
rewriting of their shared builders, which these tests use too."""

from tests.api.conftest import client_for

__all__ = ["client_for"]
