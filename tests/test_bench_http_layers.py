"""``python -m bench.http_layers`` puts each sample in the layer its innermost frame names.

The sampling itself needs py-spy and ptrace (run by hand, docs/performance.md); what is
tested here is the accounting the printed figures rest on, and the mode it serves in.
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from bench import http_layers
from bench.http_layers import REST, layer_of, read_samples

SERVER = [
    "<module> (runtime-store:8)",
    "serve (app/cli/serve.py:321)",
    "serve_one_socket (app/serving/workers.py:283)",
    "Server.run (uvicorn/server.py:86)",
    "asyncio_run (uvicorn/_compat.py:30)",
    "Runner.run (asyncio/runners.py:118)",
]
REQUEST = [
    *SERVER,
    "RequestResponseCycle.run_asgi (uvicorn/protocols/http/httptools_impl.py:422)",
    "FastAPI.__call__ (fastapi/applications.py:1224)",
    "Front.__call__ (app/api/middleware/front.py:63)",
    "Router.__call__ (starlette/routing.py:683)",
]


def test_a_sample_belongs_to_its_innermost_named_layer() -> None:
    store = [*REQUEST, "append_run_record (app/api/routes/runs.py:153)"]
    store += ["StoreCalls.__call__ (app/api/store_calls.py:140)"]
    assert layer_of(store) == "store call"
    validation = [*REQUEST, "solve_dependencies (fastapi/dependencies/utils.py:781)"]
    validation += ["TypeAdapter.validate_python (pydantic/type_adapter.py:410)"]
    assert layer_of(validation) == "FastAPI and Starlette request handling"
    access_line = [*REQUEST[:-1], "RequestObserver.end (app/observability/requests.py:129)"]
    access_line += ["StreamHandler.emit (logging/__init__.py:1113)"]
    assert layer_of(access_line) == "middlewares and observation"
    assert layer_of([*REQUEST[:-2], "front_send (app/api/middleware/front.py:59)"]) == (
        "middlewares and observation"
    )


def test_the_servers_scaffolding_is_the_event_loops_own_time() -> None:
    """uvicorn's ``Server.run`` and the CLI sit under every sample: they name no layer."""
    assert layer_of(SERVER) == REST
    parse = [
        *SERVER,
        "HttpToolsProtocol.data_received (uvicorn/protocols/http/httptools_impl.py:174)",
    ]
    assert layer_of(parse) == "uvicorn HTTP protocol"


def test_a_greenlets_stack_counts_as_the_store_call() -> None:
    """A store call in a greenlet shows without the frames that spawned it."""
    frames = ["SqlStore.append_run_record (app/storage/store.py:177)"]
    frames += ["BaseCursor._send_query_prepared (psycopg/_cursor_base.py:602)"]
    assert layer_of(frames) == "store call"


def test_only_the_event_loop_threads_samples_count(tmp_path: Path) -> None:
    raw = tmp_path / "samples.txt"
    raw.write_text(
        "thread (1): MainThread;" + ";".join(SERVER) + " 5\n"
        "thread (1): MainThread;SqlStore.append_run_record (app/storage/store.py:177) 3\n"
        "thread (2): read-deadlines;Condition.wait (threading.py:331) 40\n"
    )
    counts = read_samples(raw)
    assert counts == {REST: 5, "store call": 3}


@pytest.mark.parametrize(("argv", "mode"), [([], "tokens"), (["--auth", "open"], "open")])
def test_it_serves_with_tokens_unless_told_open(
    argv: list[str], mode: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []

    def measure(*args: object) -> tuple[float, int, collections.Counter[str]]:
        asked.append(str(args[-1]))
        return 2.0, 10, collections.Counter({REST: 3, "store call": 1})

    monkeypatch.setattr(http_layers, "measure", measure)
    http_layers.main(argv)
    assert asked == [mode]
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith(f"auth {mode}: 10 appends, service CPU 2.000 ms per append")
    assert "| store call | 25.0% | 0.500 |" in printed
