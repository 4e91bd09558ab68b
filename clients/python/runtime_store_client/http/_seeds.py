"""The call table of run seeds and preparations (CONTRACT.md 15), shared by ``HttpStore``
and ``AsyncHttpStore`` (as ``_operations``).

Each function refuses what cannot be sent, with the error the server would answer (an
empty path ID, bytes that are not bytes, ``messages`` that are not UTF-8, a ``limit``
that is no integer of at least 1), and returns the ``Call``. Byte values travel as padded
standard base64, ``messages`` as a string holding its exact JSON text; pages of records
are read from their JSON in one layer (``_seed_page_json``), the generated models being the
fallback and the reference.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from .._generated.api.seeds import append_run_seed as append_api
from .._generated.api.seeds import begin_run_seed as begin_api
from .._generated.api.seeds import find_run_preparation as find_api
from .._generated.api.seeds import list_run_preparation_records as preparation_records_api
from .._generated.api.seeds import list_run_seed_records as seed_records_api
from .._generated.api.seeds import load_run_seed as load_api
from .._generated.api.seeds import publish_run_seed as publish_api
from .._generated.api.seeds import settle_run_preparation as settle_api
from .._generated.models import (
    AppendRunSeedRequest,
    BeginRunSeedRequest,
    HistoryPrefixBody,
    LiteralPartBody,
    LiteralPartSeedRecordBody,
    MessagesSeedRecordBody,
    NewSeedRecordBody,
    PrefixSeedRecordBody,
    PreparationAnswerBody,
    PreparationOperationBody,
    PreparedSeedRecordBody,
    PromptScopeBody,
    PromptScopeBodyLabelsType0,
    PublishRunSeedRequest,
    RenderedPromptBody,
    RunPreparationBody,
    RunSeedBody,
    SeedAppendResultBody,
    SeedDeclarationBody,
    SeedPageBody,
    SettleRunPreparationRequest,
)
from .._generated.models import SeedKind as WireSeedKind
from .._generated.types import Unset
from ..errors import InvalidArgumentError, InvalidTranscriptPositionError
from ..seeds import (
    HistoryPrefix,
    LiteralPart,
    PreparationOperation,
    PromptScope,
    RenderedPrompt,
    RunPreparation,
    RunSeed,
    SeedAppendResult,
    SeedDeclaration,
    SeedKind,
    SeedPage,
    SeedRecord,
)
from . import _requests as r
from ._call import Call

# --- request bodies ----------------------------------------------------------------------


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string")
    return value


def _base64(value: object, what: str) -> str:
    if not isinstance(value, bytes | bytearray):
        raise InvalidArgumentError(f"{what} must be bytes")
    return base64.b64encode(value).decode("ascii")


def _labels(labels: object, what: str) -> PromptScopeBodyLabelsType0:
    if labels is None:
        labels = {}
    if not isinstance(labels, Mapping):
        raise InvalidArgumentError(f"{what} must be a map of strings")
    return PromptScopeBodyLabelsType0.from_dict(dict(labels))


def _prompt_body(prompt: object, what: str) -> RenderedPromptBody:
    if not isinstance(prompt, RenderedPrompt):
        raise InvalidArgumentError(f"{what} must be a RenderedPrompt")
    scope = PromptScope() if prompt.scope is None else prompt.scope
    if not isinstance(scope, PromptScope):
        raise InvalidArgumentError(f"{what}.scope must be a PromptScope")
    return RenderedPromptBody(
        prompt_id=prompt.prompt_id,
        version=prompt.version,
        scope=PromptScopeBody(
            session_id=scope.session_id, labels=_labels(scope.labels, f"{what}.scope.labels")
        ),
    )


def _prompts(prompts: object) -> list[RenderedPromptBody]:
    if prompts is None:
        return []
    if isinstance(prompts, str | bytes) or not isinstance(prompts, Sequence):
        raise InvalidArgumentError("declaration.rendered_prompts must be a list")
    return [
        _prompt_body(prompt, f"declaration.rendered_prompts[{index}]")
        for index, prompt in enumerate(prompts)
    ]


def _kind(kind: object) -> WireSeedKind:
    try:
        return WireSeedKind(SeedKind(str(kind)).value)
    except ValueError:
        raise InvalidArgumentError(
            f"declaration.kind must be literal, next_turn or continuation, not {kind!r}"
        ) from None


def _declaration_body(declaration: SeedDeclaration) -> SeedDeclarationBody:
    if not isinstance(declaration, SeedDeclaration):
        raise InvalidArgumentError("declaration must be a SeedDeclaration")
    return SeedDeclarationBody(
        agent_id=declaration.agent_id,
        run_id=declaration.run_id,
        session_id=declaration.session_id,
        command_id=declaration.command_id,
        attempt_id=declaration.attempt_id,
        kind=_kind(declaration.kind),
        source_run_id=declaration.source_run_id,
        source_end_id=declaration.source_end_id,
        exclude_reasoning=declaration.exclude_reasoning,
        rendered_prompts=_prompts(declaration.rendered_prompts),
    )


def _prefix_body(prefix: object, what: str) -> HistoryPrefixBody:
    if not isinstance(prefix, HistoryPrefix):
        raise InvalidArgumentError(f"{what} must be a HistoryPrefix")
    return HistoryPrefixBody(
        run_id=prefix.run_id,
        end_id=prefix.end_id,
        exclude_system=prefix.exclude_system,
        exclude_reasoning=prefix.exclude_reasoning,
    )


def _part_body(part: object) -> LiteralPartBody:
    if not isinstance(part, LiteralPart):
        raise InvalidArgumentError("record.literal_part must be a LiteralPart")
    return LiteralPartBody(data=_base64(part.data, "record.literal_part.data"), final=part.final)


def _record_body(record: SeedRecord) -> NewSeedRecordBody:
    """The record to append: every variant that is set (the server refuses more than one),
    the others absent."""
    if not isinstance(record, SeedRecord):
        raise InvalidArgumentError("record must be a SeedRecord")
    body = NewSeedRecordBody(key=record.key, previous_id=record.previous_id, id=record.id)
    if record.messages is not None:
        body.messages = r.wire_payload(record.messages, "record.messages")
    if record.literal_part is not None:
        body.literal_part = _part_body(record.literal_part)
    if record.prefix is not None:
        body.prefix = _prefix_body(record.prefix, "record.prefix")
    if record.prepared is not None:
        body.prepared = _base64(record.prepared, "record.prepared")
    return body


def _operation_body(operation: PreparationOperation) -> PreparationOperationBody:
    return PreparationOperationBody(
        agent_id=operation.agent_id,
        run_id=operation.run_id,
        session_id=operation.session_id,
        command_id=operation.command_id,
    )


def _operation(operation: object) -> PreparationOperation:
    if not isinstance(operation, PreparationOperation):
        raise InvalidArgumentError("operation must be a PreparationOperation")
    return operation


def _page_args(after: object, limit: object) -> dict[str, Any]:
    """A list's ``after`` and ``limit``; ``limit`` is checked first, as the store does."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidTranscriptPositionError(f"limit must be an integer of at least 1: {limit!r}")
    return {"after": _text(after, "after"), "limit": limit}


# --- answers -----------------------------------------------------------------------------


def _or(value: Any, default: Any) -> Any:
    return default if isinstance(value, Unset) else value


def _scope(body: PromptScopeBody | Unset | None) -> PromptScope:
    if not isinstance(body, PromptScopeBody):
        return PromptScope()
    labels = body.labels
    return PromptScope(
        session_id=_or(body.session_id, ""),
        labels=dict(labels.additional_properties)
        if isinstance(labels, PromptScopeBodyLabelsType0)
        else {},
    )


def _declaration(body: SeedDeclarationBody) -> SeedDeclaration:
    prompts = body.rendered_prompts if isinstance(body.rendered_prompts, list) else []
    return SeedDeclaration(
        agent_id=body.agent_id,
        run_id=body.run_id,
        session_id=_or(body.session_id, ""),
        command_id=body.command_id,
        attempt_id=body.attempt_id,
        kind=SeedKind(body.kind.value),
        source_run_id=_or(body.source_run_id, ""),
        source_end_id=_or(body.source_end_id, ""),
        exclude_reasoning=_or(body.exclude_reasoning, False),
        rendered_prompts=tuple(
            RenderedPrompt(prompt_id=p.prompt_id, version=p.version, scope=_scope(p.scope))
            for p in prompts
        ),
    )


def _prefix(body: HistoryPrefixBody) -> HistoryPrefix:
    return HistoryPrefix(
        run_id=body.run_id,
        end_id=body.end_id,
        exclude_system=body.exclude_system,
        exclude_reasoning=body.exclude_reasoning,
    )


def _run_seed(body: RunSeedBody) -> RunSeed:
    source = body.source
    return RunSeed(
        declaration=_declaration(body.declaration),
        source=_prefix(source) if isinstance(source, HistoryPrefixBody) else None,
        end_id=body.end_id,
    )


def _run_preparation(body: RunPreparationBody) -> RunPreparation:
    return RunPreparation(
        seed=_run_seed(body.seed), end_id=body.end_id, prepared_bytes=body.prepared_bytes
    )


def _preparation_answer(body: PreparationAnswerBody) -> RunPreparation | None:
    found = body.preparation
    if not body.found or not isinstance(found, RunPreparationBody):
        return None
    return _run_preparation(found)


def _append_result(body: SeedAppendResultBody) -> SeedAppendResult:
    return SeedAppendResult(id=body.id, inserted=body.inserted)


_RecordBody = (
    MessagesSeedRecordBody
    | LiteralPartSeedRecordBody
    | PrefixSeedRecordBody
    | PreparedSeedRecordBody
)


def _seed_record(head: tuple[str, str, str], **variant: Any) -> SeedRecord:
    record_id, key, previous_id = head
    return SeedRecord(id=record_id, key=key, previous_id=previous_id, **variant)


def _record(body: _RecordBody) -> SeedRecord:
    head = (body.id, body.key, body.previous_id)
    if isinstance(body, MessagesSeedRecordBody):
        return _seed_record(head, messages=body.messages.encode("utf-8"))
    if isinstance(body, LiteralPartSeedRecordBody):
        part = body.literal_part
        data = base64.b64decode(part.data)
        return _seed_record(head, literal_part=LiteralPart(data=data, final=part.final))
    if isinstance(body, PrefixSeedRecordBody):
        return _seed_record(head, prefix=_prefix(body.prefix))
    return _seed_record(head, prepared=base64.b64decode(body.prepared))


def _seed_page(body: SeedPageBody) -> SeedPage:
    return SeedPage(records=[_record(item) for item in body.records], next_cursor=body.next_cursor)


def _str(value: object) -> str:
    if type(value) is not str:
        raise TypeError("not a string")
    return value


def _bool(value: object) -> bool:
    if type(value) is not bool:
        raise TypeError("not a boolean")
    return value


def _record_json(item: dict[str, Any]) -> SeedRecord:
    """One record of a page from its JSON: exactly one variant key beside the three."""
    head = (_str(item["id"]), _str(item["key"]), _str(item["previous_id"]))
    if len(item) != len(head) + 1:
        raise ValueError("a seed record holds exactly one variant")
    if "messages" in item:
        return _seed_record(head, messages=_str(item["messages"]).encode("utf-8"))
    if "literal_part" in item:
        part = item["literal_part"]
        data = base64.b64decode(_str(part["data"]), validate=True)
        return _seed_record(head, literal_part=LiteralPart(data=data, final=_bool(part["final"])))
    if "prefix" in item:
        prefix = item["prefix"]
        return _seed_record(
            head,
            prefix=HistoryPrefix(
                run_id=_str(prefix["run_id"]),
                end_id=_str(prefix["end_id"]),
                exclude_system=_bool(prefix["exclude_system"]),
                exclude_reasoning=_bool(prefix["exclude_reasoning"]),
            ),
        )
    return _seed_record(head, prepared=base64.b64decode(_str(item["prepared"]), validate=True))


def _seed_page_json(body: Any) -> SeedPage:
    """``_seed_page(SeedPageBody.from_dict(body))`` in one layer (a page holds up to 512
    records); a body it cannot read raises, and the generated models read it instead."""
    return SeedPage(
        records=[_record_json(item) for item in body["records"]],
        next_cursor=_str(body["next_cursor"]),
    )


# --- the calls (15.2-15.4) -------------------------------------------------------------------


def begin_run_seed(declaration: SeedDeclaration) -> Call[RunSeed]:
    """Declare one attempt of a run's seed: its owner and resolved source (15.2)."""
    body = BeginRunSeedRequest(declaration=_declaration_body(declaration))
    return Call(
        begin_api,
        {"run_id": r.path_id(declaration.run_id, "declaration.run_id"), "body": body},
        _run_seed,
    )


def append_run_seed(run_id: str, attempt_id: str, record: SeedRecord) -> Call[SeedAppendResult]:
    """Append one record right after its exact predecessor (15.2)."""
    path = {
        "run_id": r.path_id(run_id, "run_id"),
        "attempt_id": r.path_id(attempt_id, "attempt_id"),
    }
    body = AppendRunSeedRequest(record=_record_body(record))
    return Call(append_api, {**path, "body": body}, _append_result)


def publish_run_seed(
    run_id: str, attempt_id: str, seed_end_id: str, end_id: str, prepared_bytes: int
) -> Call[RunPreparation]:
    """Seal the attempt's whole chain at once (15.2)."""
    path = {
        "run_id": r.path_id(run_id, "run_id"),
        "attempt_id": r.path_id(attempt_id, "attempt_id"),
    }
    if isinstance(prepared_bytes, bool) or not isinstance(prepared_bytes, int):
        raise InvalidArgumentError("prepared_bytes must be an integer")
    body = PublishRunSeedRequest(
        seed_end_id=_text(seed_end_id, "seed_end_id"),
        end_id=_text(end_id, "end_id"),
        prepared_bytes=prepared_bytes,
    )
    return Call(publish_api, {**path, "body": body}, _run_preparation)


def find_run_preparation(operation: PreparationOperation) -> Call[RunPreparation | None]:
    """The operation's accepted preparation, or ``None`` yet (15.3)."""
    operation = _operation(operation)
    return Call(
        find_api,
        {
            "run_id": r.path_id(operation.run_id, "operation.run_id"),
            "agent_id": _text(operation.agent_id, "operation.agent_id"),
            "session_id": _text(operation.session_id, "operation.session_id"),
            "command_id": _text(operation.command_id, "operation.command_id"),
        },
        _preparation_answer,
    )


def settle_run_preparation(
    operation: PreparationOperation, attempt_id: str
) -> Call[RunPreparation | None]:
    """The accepted preparation, or ``None`` with the attempt abandoned for ever (15.3)."""
    operation = _operation(operation)
    return Call(
        settle_api,
        {
            "run_id": r.path_id(operation.run_id, "operation.run_id"),
            "attempt_id": r.path_id(attempt_id, "attempt_id"),
            "body": SettleRunPreparationRequest(operation=_operation_body(operation)),
        },
        _preparation_answer,
    )


def load_run_seed(run_id: str, seed_end_id: str) -> Call[RunSeed]:
    """The run ID's published seed (15.4)."""
    return Call(
        load_api,
        {"run_id": r.path_id(run_id, "run_id"), "seed_end_id": _text(seed_end_id, "seed_end_id")},
        _run_seed,
    )


def list_run_seed_records(
    run_id: str, seed_end_id: str, after: str = "", limit: int = 100
) -> Call[SeedPage]:
    """A page of the published seed's history records (15.4)."""
    page = _page_args(after, limit)
    return Call(
        seed_records_api,
        {
            "run_id": r.path_id(run_id, "run_id"),
            "seed_end_id": _text(seed_end_id, "seed_end_id"),
            **page,
        },
        _seed_page,
        _seed_page_json,
    )


def list_run_preparation_records(
    run_id: str, end_id: str, after: str = "", limit: int = 100
) -> Call[SeedPage]:
    """A page of the published compiled start's records (15.4)."""
    page = _page_args(after, limit)
    return Call(
        preparation_records_api,
        {"run_id": r.path_id(run_id, "run_id"), "end_id": _text(end_id, "end_id"), **page},
        _seed_page,
        _seed_page_json,
    )
