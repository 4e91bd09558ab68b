"""A serving process's memory: glibc's malloc arenas capped for the service and its workers,
and each worker's start-up heap kept out of the garbage collector's full passes
(docs/performance.md)."""

from __future__ import annotations

import ctypes
import gc
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


def freeze_startup_heap() -> int:
    """Move every object alive now (the modules, the app, its engines and stores) to the
    collector's permanent generation, after collecting what start-up left behind; how many
    objects were frozen.

    A full collection walks every tracked object: a started worker holds about 160,000,
    and one full pass took 70-150 ms on the 2-core machine, every thread of the worker
    stopped meanwhile (the GIL). Work that allocates a lot, such as an import of 222,222
    records, triggers one every second or two, and each stalled the worker's other
    requests (an append waited ~100-230 ms). Frozen, the start-up heap is never walked
    again, and a full pass costs what was allocated since. Those objects live as long as
    the worker anyway; once per worker, after its lifespan has started (never in tests,
    whose process builds many apps).
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
