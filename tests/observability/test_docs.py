"""docs/operations.md and the Grafana dashboard name the metrics the service exports, and
nothing else."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client import REGISTRY

from tests.api.conftest import client_for

DOCS = Path(__file__).resolve().parents[2] / "docs"
NAME = re.compile(r"runtime_store_[a-z_]*[a-z]")


def _families(sqlite_url: str) -> dict[str, str]:
    """Every family the service exports (after a scrape, so all are registered): its type
    by name (counters without ``_total``)."""
    with client_for(sqlite_url) as http:
        assert http.get("/metrics").status_code == 200
    return {
        metric.name: metric.type
        for metric in REGISTRY.collect()
        if metric.name.startswith("runtime_store_")
    }


def _exported(sqlite_url: str) -> set[str]:
    """The names PromQL may use for them."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}
    return {
        name + suffix
        for name, kind in _families(sqlite_url).items()
        for suffix in suffixes.get(kind, ("",))
    }


def _dashboard_names() -> set[str]:
    dashboard = json.loads((DOCS / "grafana-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert exprs
    return {name for expr in exprs for name in NAME.findall(expr)}


def test_the_dashboard_queries_only_exported_metrics(sqlite_url: str) -> None:
    assert _dashboard_names() - _exported(sqlite_url) == set()


def test_operations_md_documents_every_exported_metric_and_no_other(sqlite_url: str) -> None:
    text = (DOCS / "operations.md").read_text()
    # "`runtime_store_db_pool_in_use`, `…_pool_overflow`" abbreviates a shared prefix.
    text = re.sub(r"`(runtime_store_[a-z]+)_([a-z_]+)`, `…_([a-z_]+)`", r"`\1_\2`, `\1_\3`", text)
    documented = set(NAME.findall(text))
    families = _families(sqlite_url)
    assert documented - _exported(sqlite_url) - set(families) == set()
    for name, kind in families.items():
        as_documented = name + "_total" if kind == "counter" else name
        assert as_documented in documented, f"{as_documented} is not in docs/operations.md"
