"""What every operation of the store is given: its unit of work and its bounds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from app.domain.limits import Limits
from app.storage.access.service_keys import CursorKeys
from app.storage.fast_path.group_commit import GroupCommit
from app.storage.unit_of_work.transactions import UnitOfWork

DEFAULT_PAGE_MAX: Final = 1000
DEFAULT_PAGE_BYTE_BUDGET: Final = 4 * 1024 * 1024
#: Most records one transaction of a purge deletes.
DEFAULT_PURGE_BATCH: Final = 2000


@dataclass(frozen=True, slots=True)
class Context:
    uow: UnitOfWork
    limits: Limits
    #: Seals and opens the store's page cursors (key from the database, loaded once).
    cursors: CursorKeys
    #: Largest page a list returns (section 4).
    page_max: int = DEFAULT_PAGE_MAX
    #: Payload bytes after which a page of records stops (section 4).
    page_byte_budget: int = DEFAULT_PAGE_BYTE_BUDGET
    purge_batch: int = DEFAULT_PURGE_BATCH
    #: Combines concurrent single appends (``fast_path/group_commit.py``); ``None``: each alone.
    group_commit: GroupCommit | None = None
    #: ``RUNTIME_STORE_REQUIRE_SEEDS``: every start must attach a published seed (15.5).
    require_seeds: bool = False
