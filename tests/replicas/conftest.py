"""A streaming primary and standby for the read-replica tests (cluster.py), once per
test session of each worker, and a live service on them."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.storage import upgrade_schema
from tests.conftest import LiveServer, start_server, stop_server

from .cluster import StreamingPair


@dataclass
class ReplicatedService:
    """A live service whose reads may be served by the standby of ``pair``."""

    pair: StreamingPair
    database: str
    server: LiveServer

    @property
    def primary_url(self) -> str:
        return self.pair.primary_url(self.database)


def start_replicated(
    pair: StreamingPair, log_dir: os.PathLike[str], **env: str
) -> ReplicatedService:
    database = f"rs_rep_{uuid.uuid4().hex[:10]}"
    pair.create_database(database)
    upgrade_schema(pair.primary_url(database))
    pair.catch_up()
    server = start_server(
        pair.primary_url(database),
        Path(log_dir) / f"{database}.log",
        env={"RUNTIME_STORE_READ_DATABASE_URLS": pair.standby_url(database), **env},
    )
    return ReplicatedService(pair, database, server)


@pytest.fixture
def replicated(
    streaming_pair: StreamingPair, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplicatedService]:
    """A fresh database on the pair and a service over it, replay running."""
    service = start_replicated(streaming_pair, tmp_path_factory.mktemp("logs"))
    try:
        yield service
    finally:
        stop_server(service.server)
        streaming_pair.resume_replay()
