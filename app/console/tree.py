"""A run's shape: the tree around it (``/console/fragments/run/children``).

Its ancestors up to the root (at most ``MAX_ANCESTORS`` reads up), its predecessor and
successor (the continuations of CONTRACT.md 3.13 and 12.4: the predecessor is named by
the run's ``run_started`` record, the successor by its meta), and its children, a page at
a time. Each node links to its run page and shows its status; a run the caller may no
longer read (purged, deleted by retention) is shown by its ID with the API's code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runtime_store_client import RunMeta, StoreError

from .api import Api
from .rendering import PAGE_SIZE, fragment, link
from .run_state import RunStateDep
from .views import run_facts

router = APIRouter()

#: Ancestors read above a run (each one ``GET /v1/runs/{id}``); a deeper tree says so.
MAX_ANCESTORS: Final = 8


@dataclass(frozen=True)
class Node:
    """One run of the tree: its ID, link, and status (or why it could not be read)."""

    run_id: str
    href: str
    status: str = ""
    agent_id: str = ""
    problem: str = ""


def node(meta: RunMeta) -> Node:
    return Node(
        run_id=meta.run_id,
        href=link("/console/run", {"run_id": meta.run_id}),
        status=meta.status.value,
        agent_id=meta.agent_id,
    )


async def read_node(api: Api, run_id: str) -> tuple[Node, RunMeta | None]:
    """The run as a node, and its meta when the API answers it."""
    try:
        meta = await api.store.load_run(run_id)
    except StoreError as refused:
        return Node(run_id, link("/console/run", {"run_id": run_id}), problem=refused.code), None
    return node(meta), meta


async def ancestors(api: Api, run: RunMeta) -> tuple[list[Node], bool]:
    """The run's ancestors, root first (at most ``MAX_ANCESTORS``), and whether more are
    above the first shown."""
    found: list[Node] = []
    parent = run.parent_run_id
    seen = {run.run_id}
    while parent and len(found) < MAX_ANCESTORS and parent not in seen:
        seen.add(parent)
        shown, meta = await read_node(api, parent)
        found.append(shown)
        parent = meta.parent_run_id if meta is not None else ""
    return found[::-1], bool(parent)


@router.get("/fragments/run/children")
async def tree_fragment(request: Request, state: RunStateDep) -> HTMLResponse:
    """The run tree: ancestors, predecessor, the run, its children (paged), successor."""

    async def load(api: Api) -> dict[str, Any]:
        run = await api.store.load_run(state.run_id)
        first = await api.store.list_run_records(state.run_id, limit=1)
        predecessor_id = run_facts(first.records)["predecessor_run_id"]
        predecessor = (await read_node(api, predecessor_id))[0] if predecessor_id else None
        successor = (
            (await read_node(api, run.successor_run_id))[0] if run.successor_run_id else None
        )
        above, more_above = await ancestors(api, run)
        children = await api.store.search_runs(
            parent_run_id=state.run_id, cursor=state.children_cursor, limit=PAGE_SIZE
        )
        return {
            "run": node(run),
            "ancestors": above,
            "more_above": more_above,
            "predecessor": predecessor,
            "successor": successor,
            "children": [node(child) for child in children.runs],
            "next": state.page("children", children_cursor=children.next_cursor)
            if children.next_cursor
            else "",
            "first": state.page("children", children_cursor="") if state.children_cursor else "",
        }

    return await fragment(request, "fragments/tree.html", load)
