"""The committed openapi.yaml is the app's document, and the document is a product surface."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

from app.cli import openapi_yaml

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "runtime-store openapi --output openapi.yaml"


@functools.cache
def committed_text() -> str:
    """The document as ``runtime-store openapi`` writes it (built once: the app and its
    YAML take seconds of CPU, and every test here reads the same text)."""
    return openapi_yaml()


def document() -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, where PyYAML has it
    loaded: dict[str, Any] = yaml.load(committed_text(), Loader=loader)
    return loaded


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in document()["paths"].items()
        for method, operation in item.items()
    ]


def test_committed_openapi_yaml_matches_the_app() -> None:
    committed = (ROOT / "openapi.yaml").read_text()
    assert committed == committed_text(), f"openapi.yaml is stale; regenerate it with: {REGENERATE}"


def test_every_operation_has_an_id_a_tag_a_summary_and_a_description() -> None:
    ids = [operation["operationId"] for _, _, operation in operations()]
    assert len(ids) == len(set(ids)) == 51
    for path, method, operation in operations():
        where = f"{method.upper()} {path}"
        assert operation["tags"][0] in {
            "sessions",
            "runs",
            "records",
            "seeds",
            "memory",
            "webhooks",
            "tokens",
        }, where
        assert operation["summary"], where
        assert operation["description"], where


def test_every_operation_declares_its_problems_as_problem_json() -> None:
    for path, method, operation in operations():
        responses = operation["responses"]
        for status in ("422", "500", "503"):
            assert status in responses, f"{method.upper()} {path} lacks {status}"
        for status, response in responses.items():
            if int(status) >= 400:
                content = response["content"]
                assert list(content) == ["application/problem+json"], (path, status)
                assert content["application/problem+json"]["schema"] == {
                    "$ref": "#/components/schemas/Problem"
                }


def test_enums_are_string_enums() -> None:
    schemas = document()["components"]["schemas"]
    assert schemas["RunStatus"] == {
        "type": "string",
        "enum": ["running", "suspended", "completed", "failed", "canceled"],
        "title": "RunStatus",
        "description": schemas["RunStatus"]["description"],
    }
    for name in ("SessionStatus", "RunStartOutcome", "RepairOutcome"):
        assert schemas[name]["type"] == "string"
        assert schemas[name]["enum"]


def test_health_endpoints_stay_out_of_the_public_document() -> None:
    assert not {"/healthz", "/readyz"} & set(document()["paths"])


def test_no_schema_is_left_untyped() -> None:
    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            assert node != {} or where.endswith(("examples", "default")), f"untyped at {where}"
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}[{index}]")

    walk(document()["components"]["schemas"], "components.schemas")
