"""``serve`` caps glibc's malloc arenas (app/serving.py), unless the operator chose a cap."""

from __future__ import annotations

import os
import platform

import pytest

from app.serving import MALLOC_ARENAS, limit_malloc_arenas


def test_serve_caps_the_arenas_of_its_process_and_its_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)

    applied = limit_malloc_arenas()

    assert os.environ["MALLOC_ARENA_MAX"] == str(MALLOC_ARENAS)  # inherited by the workers
    assert applied is (platform.libc_ver()[0] == "glibc")


def test_an_operators_malloc_arena_max_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")

    assert limit_malloc_arenas() is False
    assert os.environ["MALLOC_ARENA_MAX"] == "8"
