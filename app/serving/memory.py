"""glibc's malloc arenas capped for the service and its workers (docs/performance.md)."""

from __future__ import annotations

import ctypes
import os
import platform
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


#: glibc's ``mallopt`` parameter for the number of malloc arenas.
_M_ARENA_MAX = -8


#: Arenas a serving process keeps: glibc's default is 8 per core, and every database thread
#: that frees a page's rows into an arena of its own keeps that memory (the SQLite
#: service's peak RSS over the benchmark's grid: 145-146 MB with the default, 138-139 MB
#: with two; docs/performance.md).
MALLOC_ARENAS = 2


def limit_malloc_arenas() -> bool:
    """Cap glibc's malloc arenas for this process and the workers it starts, unless the
    operator set ``MALLOC_ARENA_MAX``; whether the cap applies here (glibc only)."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    os.environ["MALLOC_ARENA_MAX"] = str(MALLOC_ARENAS)  # read by glibc in each worker
    if platform.libc_ver()[0] != "glibc":
        return False
    # The running process's own symbols: glibc is loaded already, no library search.
    return bool(ctypes.CDLL(None).mallopt(_M_ARENA_MAX, MALLOC_ARENAS))
