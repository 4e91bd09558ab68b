"""The identities of this process's recent tokens, so that a known token costs no store call.

Each entry maps a token's keyed hash to its ``Identity`` and the time of the read that last
proved it active. An entry is trusted for ``TRUSTED_SECONDS`` after that read *began*;
``revalidate`` re-proves every entry in one read each ``REVALIDATE_SECONDS``, dropping
those revoked meanwhile. So a token revoked in the database (``runtime-store tokens
revoke``, from any process) is refused by every service process within
``REVOCATION_BOUND_SECONDS``, and while the database does not answer no entry outlives it
(the request then asks the database itself, and answers ``unavailable``).

Only active tokens are kept: an unknown or revoked token is looked up each time it is
presented and never fills the cache. The number of entries is bounded (least recently used
go first).

Hand-written over an ``OrderedDict``: cachetools' ``TTLCache`` times an entry from its
insertion, the bound needs it timed from the read that proved it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from typing import Final

from app.api.store_calls import StoreCalls
from app.domain.tokens import Identity
from app.storage import Tokens
from runtime_store_client import UnavailableError

log = logging.getLogger("runtime_store.auth")

#: How often the cached identities are proven again (one read for all of them).
REVALIDATE_SECONDS: Final = 0.5
#: How long after the read that proved it an entry is believed without another.
TRUSTED_SECONDS: Final = 1.0
#: A revoked token is refused by every service process at most this long after the revoke
#: committed (docs/administration.md): an entry's trust began before its read did.
REVOCATION_BOUND_SECONDS: Final = TRUSTED_SECONDS
#: Entries kept per process (tokens are per worker fleet: a few to a few hundred).
MAX_ENTRIES: Final = 4096
#: The longest string looked up as a token (tokens are ``rst_`` and 43 characters; an
#: operator's own are at least as long): longer is refused without hashing it.
MAX_TOKEN_LENGTH: Final = 512


class _Entry:
    __slots__ = ("identity", "proven_at")

    def __init__(self, identity: Identity, proven_at: float) -> None:
        self.identity = identity
        self.proven_at = proven_at


class Identities:
    """Token → ``Identity`` for one service process, bounded in size and age."""

    def __init__(self, tokens: Tokens, calls: StoreCalls) -> None:
        self._tokens = tokens
        self._calls = calls
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._entries)

    async def of(self, token: str) -> Identity | None:
        """The identity of an active token, or ``None`` (unknown, revoked, not a token).

        A token proven within ``TRUSTED_SECONDS`` costs a hash and a dictionary look-up;
        any other asks the database (``UnavailableError`` when it cannot answer)."""
        if len(token) > MAX_TOKEN_LENGTH:
            return None
        digest = self._tokens.digest(token)
        if digest is None:
            return None
        entry = self._entries.get(digest)
        now = time.monotonic()
        if entry is not None and now - entry.proven_at < TRUSTED_SECONDS:
            self._entries.move_to_end(digest)
            return entry.identity
        found = await self._calls(self._tokens.identity_of, digest)
        if found is None:
            self._entries.pop(digest, None)
            return None
        identity = Identity(name=found[0], role=found[1], digest=digest)
        self._keep(identity, now)
        return identity

    async def confirm(self, identity: Identity) -> bool:
        """Whether ``identity``'s token is still active: what a stream or a wait asks as it
        goes on (no read while its entry is trusted; else one read of that token)."""
        entry = self._entries.get(identity.digest)
        now = time.monotonic()
        if entry is not None and now - entry.proven_at < TRUSTED_SECONDS:
            return True
        found = await self._calls.unbound(self._tokens.identity_of, identity.digest)
        if found is None:
            self._entries.pop(identity.digest, None)
            return False
        self._keep(Identity(name=found[0], role=found[1], digest=identity.digest), now)
        return True

    def _keep(self, identity: Identity, proven_at: float) -> None:
        self._entries[identity.digest] = _Entry(identity, proven_at)
        self._entries.move_to_end(identity.digest)
        while len(self._entries) > MAX_ENTRIES:
            self._entries.popitem(last=False)

    async def revalidate(self) -> None:
        """Prove every entry again in one read: the revoked ones (and those whose role
        changed) leave or change. ``UnavailableError`` when the database cannot answer."""
        if not self._entries:
            return
        began = time.monotonic()
        digests = list(self._entries)
        active = await self._calls.unbound(self._tokens.active_of, digests)
        for digest in digests:
            found = active.get(digest)
            if found is None:
                self._entries.pop(digest, None)
            elif digest in self._entries:  # not evicted while the read ran
                entry = self._entries[digest]
                entry.identity = Identity(name=found[0], role=found[1], digest=digest)
                entry.proven_at = max(entry.proven_at, began)

    def start(self) -> None:
        """Revalidate every ``REVALIDATE_SECONDS`` until ``stop``."""
        self._task = asyncio.ensure_future(self._revalidating())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _revalidating(self) -> None:
        while True:
            await asyncio.sleep(REVALIDATE_SECONDS)
            try:
                await self.revalidate()
            except UnavailableError:
                # The entries age out meanwhile; requests then ask the database themselves.
                log.debug("token revalidation deferred: the database did not answer")
            except Exception:  # never end the loop: its entries would only age out
                log.exception("token revalidation failed")
