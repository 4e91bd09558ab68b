"""An OpenAI Agents SDK session on runtime-store
(``pip install 'runtime-store-client[openai-agents]'``).

``RuntimeStoreSession(session_id, store)`` implements the SDK's ``Session`` protocol on an
``AsyncHttpStore``. The session is a runtime-store session with one long-lived run; each
item is a record whose key the adapter draws once per ``add_items`` call, so a retried
request stores it once; ``pop_item`` appends a marker keyed by the item it removes (of
two callers popping one item, exactly one stores its marker: the other takes the next
item); ``clear_session`` appends a marker that hides every item before it.
docs/frameworks.md argues the design.

The bare client never imports this module, nor the SDK.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents.memory.session_settings import SessionSettings, resolve_session_limit

from ._adapters import Entry, Generation, LogSpace, LogView, Steps, adrive, event_key, now_ms
from .errors import EventConflictError
from .types import Record

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["RuntimeStoreSession"]

ITEM = "openai_agents.item"
POP = "openai_agents.pop"
CLEAR = "openai_agents.clear"


@dataclass(frozen=True)
class _Item:
    position: int  # the record ID
    key: str
    payload: bytes


class ItemsView(LogView):
    """The session as read so far: its items, who popped which, and the clears."""

    def __init__(self) -> None:
        self.items: list[_Item] = []
        self.popped: dict[str, str] = {}  # item key -> the claim that popped it
        self.clears: list[int] = []  # the record IDs of the clear markers

    def apply(self, record: Record) -> None:
        if record.type == ITEM:
            self.items.append(_Item(int(record.id), record.event_key, record.payload))
        elif record.type == POP:
            pop = json.loads(record.payload)
            self.popped.setdefault(pop["item"], pop["claim"])
        elif record.type == CLEAR:
            self.clears.append(int(record.id))
            self.items = []

    def live(self) -> list[_Item]:
        return [item for item in self.items if item.key not in self.popped]

    @staticmethod
    def keep(records: Sequence[Record], mode: str) -> list[Record]:
        """``live``: the items neither cleared nor popped, in their order."""
        if mode == "none":
            return []
        if mode != "live":
            raise ValueError(f"unknown retirement mode {mode!r}")
        view = ItemsView()
        for record in records:
            view.apply(record)
        keys = {item.key for item in view.live()}
        return [r for r in records if r.type == ITEM and r.event_key in keys]


class RuntimeStoreSession:
    """The OpenAI Agents SDK's ``Session`` on an ``AsyncHttpStore``."""

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        store: Any,
        *,
        session_settings: SessionSettings | None = None,
        prefix: str = "openai-agents/",
        agent_id: str = "openai-agents",
    ) -> None:
        self.session_id = session_id
        self.store = store
        self.session_settings = session_settings or SessionSettings()
        self._space: LogSpace[ItemsView] = LogSpace(
            framework="openai-agents",
            prefix=prefix,
            agent_id=agent_id,
            view_type=ItemsView,
            max_cached=1,
        )

    def _log(self) -> Any:
        return self._space.log(self.session_id)

    def _read(self) -> Steps[Generation[ItemsView]]:
        gen: Generation[ItemsView] = yield from self._log().catch_up()
        return gen

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The items in order; with ``limit``, the newest ``limit`` of them."""
        gen = await adrive(self.store, self._read())
        live = gen.view.live()
        count = resolve_session_limit(limit, self.session_settings)
        if count is not None and count >= 0:
            live = live[-count:] if count else []
        return [json.loads(item.payload) for item in live]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` in one transaction, each under a key drawn for this call."""
        if not items:
            return
        call = uuid.uuid4().hex
        at = now_ms()
        entries = [
            Entry(
                event_key("item", call, position),
                ITEM,
                json.dumps(item, separators=(",", ":"), ensure_ascii=True).encode(),
                at,
            )
            for position, item in enumerate(items)
        ]
        await adrive(self.store, self._log().append(entries, conflicts="raise"))

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item; ``None`` when there is none."""
        return await adrive(self.store, self._pop())

    def _pop(self) -> Steps[TResponseInputItem | None]:
        # This call's claim, and its time: a retried request is the same record.
        claim, at = uuid.uuid4().hex, now_ms()
        while True:
            gen = yield from self._read()
            live = gen.view.live()
            if not live:
                return None
            item = live[-1]
            payload = json.dumps({"item": item.key, "claim": claim}).encode()
            marker = Entry(event_key("pop", item.key), POP, payload, at)
            try:
                results = yield from self._log().append([marker], conflicts="raise")
            except EventConflictError:
                continue  # another caller popped it first: take the next one
            after = yield from self._read()
            if after.view.popped.get(item.key) != claim:
                continue
            mine = int(results[0].id)
            if after is gen and any(item.position < at_ < mine for at_ in gen.view.clears):
                continue  # a clear committed between the read and the claim removed it
            value: TResponseInputItem = json.loads(item.payload)
            return value

    async def clear_session(self) -> None:
        """Hide every item stored before this call; the session reads empty at once."""
        marker = Entry(event_key("clear", uuid.uuid4().hex), CLEAR, b"{}", now_ms())
        await adrive(self.store, self._log().append([marker], conflicts="raise"))

    async def compact(self) -> None:
        """Move the live items into a new runtime-store session and purge the old one,
        with its popped and cleared records (docs/frameworks.md)."""
        await adrive(self.store, self._log().retire("live"))
