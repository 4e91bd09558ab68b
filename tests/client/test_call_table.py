"""The call table (``http/_operations``, ``http/_seeds``, ``http/_webhooks``): each
operation described once and sent by both stores, which offer the same methods with the
same signatures."""

from __future__ import annotations

import inspect
from types import FunctionType

from runtime_store_client import AsyncHttpStore, HttpStore
from runtime_store_client.http import _operations, _seeds, _webhooks
from runtime_store_client.http._call import AsyncOperation, Operation

#: Functions of the table's modules that are not a store method of their own.
HELPERS = {"transcript_page", "wait", "check_wait"}


def _table() -> dict[str, FunctionType]:
    return {
        name: value
        for module in (_operations, _seeds, _webhooks)
        for name, value in vars(module).items()
        if isinstance(value, FunctionType)
        and value.__module__ == module.__name__
        and not name.startswith("_")
        and name not in HELPERS
    }


def _public(store: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(getattr(store, name))
        for name in dir(store)
        if not name.startswith("_")
        and name not in ("close", "aclose")
        and callable(getattr(store, name))  # properties aside
    }


def test_every_call_of_the_table_is_a_method_of_both_stores() -> None:
    table = _table()
    assert len(table) == 45
    for name, build in table.items():
        sync = vars(HttpStore)[name]
        assert isinstance(sync, Operation), name
        assert isinstance(vars(AsyncHttpStore)[name], AsyncOperation), name
        signature = inspect.signature(getattr(HttpStore, name))
        assert list(signature.parameters)[1:] == list(inspect.signature(build).parameters)
        assert getattr(HttpStore, name).__doc__ == build.__doc__


def test_both_stores_offer_the_same_methods_with_the_same_parameters() -> None:
    sync, asynchronous = _public(HttpStore), _public(AsyncHttpStore)
    assert sync.keys() == asynchronous.keys()
    for name, signature in sync.items():
        assert signature.parameters == asynchronous[name].parameters, name
    assert inspect.iscoroutinefunction(AsyncHttpStore.load_run)
    assert not inspect.iscoroutinefunction(HttpStore.load_run)


def test_a_table_method_shows_its_signature_answer_and_docstring() -> None:
    store = HttpStore("http://127.0.0.1:1", retries=0)
    try:
        method = store.list_run_records
        assert str(inspect.signature(method)) == (
            "(run_id: 'str', cursor: 'str' = '', limit: 'int' = 100) -> 'Page'"
        )
        assert method.__name__ == "list_run_records"
        assert method.__doc__ == "A page of one run's records, oldest first (section 4)."
    finally:
        store.close()
