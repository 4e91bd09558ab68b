"""What the run page shows, as its URL carries it: every section's position (records,
children, timeline) and the records' order and type filter.

One dataclass for the page and each of its fragments, so every link a section makes
keeps what the other sections show: a view of a run is one bookmarkable URL.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Annotated

from fastapi import Depends

from .rendering import QueryList, link


@dataclass(frozen=True)
class RunState:
    """The run page's query string (empty entries dropped)."""

    run_id: str = ""
    records_cursor: str = ""
    records_order: str = ""
    records_before: str = ""
    records_latest: str = ""
    records_type: tuple[str, ...] = ()
    children_cursor: str = ""
    timeline_cursor: str = ""

    def query(self, **changes: str | tuple[str, ...]) -> dict[str, str | list[str]]:
        """The query string's values, with ``changes`` applied."""
        values = asdict(replace(self, **changes))  # type: ignore[arg-type]
        return {
            key: list(value) if isinstance(value, tuple) else value for key, value in values.items()
        }

    def page(self, anchor: str = "", **changes: str | tuple[str, ...]) -> str:
        """The run page's URL showing this state with ``changes`` (at ``#anchor``)."""
        return link("/console/run", self.query(**changes)) + (f"#{anchor}" if anchor else "")

    def fragment(self, name: str) -> str:
        """The URL of one of the run page's fragments for this state."""
        return link(f"/console/fragments/run/{name}", self.query())


def run_state(
    run_id: str = "",
    records_cursor: str = "",
    records_order: str = "",
    records_before: str = "",
    records_latest: str = "",
    records_type: QueryList = [],  # noqa: B006 - FastAPI copies query defaults
    children_cursor: str = "",
    timeline_cursor: str = "",
) -> RunState:
    """The run page's state from its query string."""
    return RunState(
        run_id=run_id,
        records_cursor=records_cursor,
        records_order=records_order,
        records_before=records_before,
        records_latest=records_latest,
        records_type=tuple(sorted({item for item in records_type if item})),
        children_cursor=children_cursor,
        timeline_cursor=timeline_cursor,
    )


RunStateDep = Annotated[RunState, Depends(run_state)]


@dataclass(frozen=True)
class Positions:
    """The other sections' positions, as a section's own fragment keeps them in its links."""

    children_cursor: str = ""
    timeline_cursor: str = ""


def positions(children_cursor: str = "", timeline_cursor: str = "") -> Positions:
    return Positions(children_cursor, timeline_cursor)


PositionsDep = Annotated[Positions, Depends(positions)]
