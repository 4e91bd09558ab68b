"""One request as a ``Call``, and the store methods that send one.

Each contract operation is described once, in the call table (``_operations``, ``_seeds``,
``_webhooks``): a function with the method's own signature and docstring that checks its
arguments and returns the ``Call`` (the generated endpoint, its arguments, the conversion
of its result). ``HttpStore`` and ``AsyncHttpStore`` list the table's functions as
``Operation`` and ``AsyncOperation`` attributes, which send the call through the store's
``_run`` (retries, error mapping), blocking or awaited.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from http import HTTPStatus
from types import MethodType, ModuleType
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

import httpx

from .._generated.client import AuthenticatedClient, Client
from .._generated.types import Response

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request: how to send it (sync or async) and how to read its 2xx body.

    ``fast``, when set, reads a 200 body's JSON straight into the result (record pages:
    up to 1,000 records, where the generated models' two layers cost more than the rest
    of the call). The request is still the generated endpoint's (its ``_get_kwargs``);
    when ``fast`` fails on a body, the generated models read it as they always do, so
    their errors are unchanged. ``tests/client/test_fast_decode.py`` checks that both
    readings agree.
    """

    endpoint: ModuleType
    kwargs: dict[str, Any]
    convert: Callable[[Any], T]
    fast: Callable[[Any], T] | None = None

    def send(self, client: Client | AuthenticatedClient) -> Response[Any]:
        response: Response[Any] = self.endpoint.sync_detailed(client=client, **self.kwargs)
        return response

    def send_async(self, client: Client | AuthenticatedClient) -> Awaitable[Response[Any]]:
        awaitable: Awaitable[Response[Any]] = self.endpoint.asyncio_detailed(
            client=client, **self.kwargs
        )
        return awaitable

    def run(self, client: Client | AuthenticatedClient) -> T:
        """Send the request and read its result."""
        if self.fast is None:
            return self.convert(self.send(client).parsed)
        response = client.get_httpx_client().request(**self.endpoint._get_kwargs(**self.kwargs))
        return self._read(client, response)

    async def run_async(self, client: Client | AuthenticatedClient) -> T:
        """Send the request and read its result, on asyncio."""
        if self.fast is None:
            return self.convert((await self.send_async(client)).parsed)
        response = await client.get_async_httpx_client().request(
            **self.endpoint._get_kwargs(**self.kwargs)
        )
        return self._read(client, response)

    def _read(self, client: Client | AuthenticatedClient, response: httpx.Response) -> T:
        assert self.fast is not None
        if response.status_code == HTTPStatus.OK:
            try:
                return self.fast(response.json())
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
                pass  # the generated models read it, and raise as they always did
        built: Response[Any] = self.endpoint._build_response(client=client, response=response)
        return self.convert(built.parsed)


def none(_: Any) -> None:
    """The result of a call answered without a body."""


# --- store methods from the call table -------------------------------------------------


class Runner(Protocol):
    """``HttpStore``: runs a call to its result."""

    def _run(self, call: Call[T]) -> T: ...


class AsyncRunner(Protocol):
    """``AsyncHttpStore``: runs a call to its result, on asyncio."""

    async def _run(self, call: Call[T]) -> T: ...


def _as_method(function: Callable[..., Any], build: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` named and documented as ``build``, with its signature after ``self``
    (for ``help`` and ``inspect``)."""
    signature = inspect.signature(build)
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    returns = signature.return_annotation  # "Call[RunMeta]": the method answers "RunMeta"
    if isinstance(returns, str) and returns.startswith("Call[") and returns.endswith("]"):
        returns = returns[len("Call[") : -1]
    function.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[this, *signature.parameters.values()], return_annotation=returns
    )
    function.__name__ = build.__name__
    function.__qualname__ = build.__name__
    function.__doc__ = build.__doc__
    return function


def _same_name(owner: type, name: str, method: Callable[..., Any]) -> None:
    """The table's function and the store's method share one name."""
    if name != method.__name__:
        raise TypeError(f"{owner.__name__}.{name} sends the call of {method.__name__}")


class Operation(Generic[P, T]):
    """A method of ``HttpStore`` that sends the call ``build`` returns for its arguments."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        def method(store: Runner, /, *args: Any, **kwargs: Any) -> T:
            return store._run(build(*args, **kwargs))

        self._method = _as_method(method, build)
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        _same_name(owner, name, self._method)

    @overload
    def __get__(
        self, store: None, owner: type | None = None
    ) -> Callable[Concatenate[Runner, P], T]: ...

    @overload
    def __get__(self, store: Runner, owner: type | None = None) -> Callable[P, T]: ...

    def __get__(
        self, store: Runner | None, owner: type | None = None
    ) -> Callable[Concatenate[Runner, P], T] | Callable[P, T]:
        if store is None:  # as a method on its class: the function
            return self._method
        bound: Callable[P, T] = MethodType(self._method, store)
        return bound


class AsyncOperation(Generic[P, T]):
    """A method of ``AsyncHttpStore`` that sends the call ``build`` returns for its
    arguments, on asyncio."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        async def method(store: AsyncRunner, /, *args: Any, **kwargs: Any) -> T:
            return await store._run(build(*args, **kwargs))

        self._method = _as_method(method, build)
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        _same_name(owner, name, self._method)

    @overload
    def __get__(
        self, store: None, owner: type | None = None
    ) -> Callable[Concatenate[AsyncRunner, P], Coroutine[Any, Any, T]]: ...

    @overload
    def __get__(
        self, store: AsyncRunner, owner: type | None = None
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(
        self, store: AsyncRunner | None, owner: type | None = None
    ) -> (
        Callable[Concatenate[AsyncRunner, P], Coroutine[Any, Any, T]]
        | Callable[P, Coroutine[Any, Any, T]]
    ):
        if store is None:  # as a method on its class: the function
            return self._method
        bound: Callable[P, Coroutine[Any, Any, T]] = MethodType(self._method, store)
        return bound
