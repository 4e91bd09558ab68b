"""Observability tests: metrics, structured logs, traces (docs/operations.md).

Helpers: ``Samples`` reads the Prometheus text of ``/metrics``; ``captured_lines`` formats
every log record of the service, as ``serve`` would, while a block runs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from app.observability.logs import JsonFormatter

#: The tests' own HTTP clients log too; only the service's lines are under test.
CLIENT_LOGGERS = ("httpx", "httpcore")

SampleKey = tuple[str, frozenset[tuple[str, str]]]


@dataclass(frozen=True)
class Samples:
    """Every sample of one scrape, by name and labels."""

    values: dict[SampleKey, float]

    @staticmethod
    def parse(text: str) -> Samples:
        values: dict[SampleKey, float] = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                values[(sample.name, frozenset(sample.labels.items()))] = sample.value
        return Samples(values)

    def get(self, name: str, **labels: str) -> float:
        return self.values.get((name, frozenset(labels.items())), 0.0)

    def minus(self, before: Samples) -> dict[SampleKey, float]:
        """What moved since ``before`` (``_created`` timestamps left out)."""
        return {
            key: value - before.values.get(key, 0.0)
            for key, value in self.values.items()
            if value != before.values.get(key, 0.0) and not key[0].endswith("_created")
        }

    def label_values(self, label: str) -> set[str]:
        return {value for _, labels in self.values for name, value in labels if name == label}


class Lines(logging.Handler):
    """Keeps every record it is given, formatted."""

    def __init__(self, formatter: logging.Formatter) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(formatter)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.split(".")[0] not in CLIENT_LOGGERS:
            self.lines.append(self.format(record))


@contextmanager
def captured_lines(
    formatter: logging.Formatter | None = None, level: int = logging.INFO
) -> Iterator[list[str]]:
    """The service's log lines (JSON unless told otherwise) while the block runs."""
    root = logging.getLogger()
    handler = Lines(formatter or JsonFormatter())
    previous = root.level
    root.addHandler(handler)
    root.setLevel(level)
    try:
        yield handler.lines
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)
