"""The console's transcript view: a run's conversation read through the transcript prefix
endpoint (``GET /v1/runs/{id}/transcript-records``, CONTRACT.md 12.3), page by page.

The first page fixes ``through``: the run's last record when the view opened. Every link
of the view carries it, so its pages are the pages of one prefix (later appends never
change them) and message numbers stay right while the run writes on; "latest" opens the
view again without it. The last page of a running run follows the run's live tail: each
new transcript record reloads that page up to it (a prefix again, one record longer).
The findings are those of the whole transcript's checks
(``GET /v1/runs/{id}/transcript?validate=…``), marked on the messages they name.

A run started with a seed (CONTRACT.md 15.6) begins with the history it inherits: the first
page shows it above the run's own messages, under a marker naming the seed's kind and the
run it was inherited from, composed by the client's helper (``build_seed_history_async``,
the same composition the API's transcript and every reader use). Messages are numbered
through the whole history, the inherited ones first, as the validators number them.
"""

from __future__ import annotations

from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runtime_store_client import (
    InvalidArgumentError,
    InvalidTranscriptError,
    RunMeta,
    StoreError,
    TranscriptViolation,
)
from runtime_store_client.transcript import build_seed_history_async, encode_message

from .api import Api, path
from .rendering import MAX_LISTED_FINDINGS, fragment, link
from .views import conversation, findings_by_message, thinking_used, transcript_messages

router = APIRouter()

#: Transcript records per page (the API also ends a page at 1 MiB of payloads).
TRANSCRIPT_PAGE_RECORDS: Final = 100


async def _past(api: Api, run_id: str, record_id: int) -> int:
    """-1 when the run has no record ``record_id``, 0 when it is its last, 1 before it:
    one read of at most one record (``cursor`` is a record ID; one past the last record
    is refused)."""
    try:
        page = await api.store.list_run_records(run_id, str(record_id), 1)
    except InvalidArgumentError:
        return -1
    return 1 if page.records else 0


async def last_record_id(api: Api, run_id: str) -> str:
    """The ID of the run's last record. Record IDs are 1, 2, … n, so doubling then halving
    finds n in about 2·log2(n) reads of at most one record each (a run of 10,000
    records: 27), never a read of the whole log. If the run writes meanwhile, a record
    that was before the last is as good a ``through``."""
    below, above = 0, 0  # records ``below`` exists and is not the last; ``above`` does not
    probe = 1
    while not above:
        found = await _past(api, run_id, probe)
        if found == 0:
            return str(probe)
        if found < 0:
            above = probe
        else:
            below, probe = probe, probe * 2
    while above - below > 1:
        probe = (below + above) // 2
        found = await _past(api, run_id, probe)
        if found == 0:
            return str(probe)
        below, above = (probe, above) if found > 0 else (below, probe)
    return str(below or 1)


async def _checks(
    api: Api, run_id: str, thinking_on: bool
) -> tuple[dict[str, list[TranscriptViolation]], dict[str, str]]:
    """The findings of each validator on the whole transcript, or why it was not checked."""
    checks: dict[str, list[TranscriptViolation]] = {}
    notes: dict[str, str] = {}
    for validator, thinking in (("planner", False), ("bedrock", thinking_on)):
        try:
            await api.store.load_transcript(run_id, validate=validator, thinking=thinking)
        except InvalidTranscriptError as broken:
            checks[validator] = broken.violations
        except StoreError as refused:
            notes[validator] = f"{refused.code}: {refused.message}"
        else:
            checks[validator] = []
    return checks, notes


async def _inherited(api: Api, run: RunMeta) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """What the run inherits from its seed, for the first page: the marker (the seed's kind,
    the run it names as its source, "" for a literal seed) and the messages, as the API
    answers them. A run without a seed inherits nothing (and costs no read)."""
    if not run.seed_end_id:
        return {}, []
    history = await build_seed_history_async(api.store, run.run_id)
    if history.seed is None:
        return {}, []
    declaration = history.seed.declaration
    source = declaration.source_run_id
    marker = {
        "kind": str(declaration.kind),
        "source_run_id": source,
        "source": link("/console/run/transcript", {"run_id": source}) if source else "",
    }
    return marker, [encode_message(message) for message in history.messages]


@router.get("/fragments/run/transcript")
async def transcript_fragment(
    request: Request,
    run_id: str = "",
    through: str = "",
    after: str = "",
    offset: int = 0,
    thinking: str = "",
) -> HTMLResponse:
    """A page of the run's transcript records up to ``through`` (default: its last
    record) as a conversation, with the findings of the whole transcript's checks."""

    async def load(api: Api) -> dict[str, Any]:
        run = await api.store.load_run(run_id)
        upto = through or await last_record_id(api, run_id)
        body = await api.store.list_run_transcript_records(
            run_id, upto, after, TRANSCRIPT_PAGE_RECORDS
        )
        messages = transcript_messages(body.records)
        seed, inherited = ({}, []) if after else await _inherited(api, run)
        thinking_on = thinking == "on" if thinking else thinking_used(inherited + messages)
        checks, notes = await _checks(api, run_id, thinking_on)
        here = {"run_id": run_id, "thinking": thinking, "through": upto}
        findings = findings_by_message(checks)
        # One conversation, so a call inherited from the seed pairs with its result here.
        views = conversation(inherited + messages, offset, findings)
        shown = offset + len(views)
        return {
            "run_id": run_id,
            "through": upto,
            "latest": link("/console/run/transcript", {"run_id": run_id, "thinking": thinking}),
            "seed": seed,
            "inherited": views[: len(inherited)],
            "messages": views[len(inherited) :],
            "whole": findings.get(-1, []),
            "listed": sorted(
                (index, finding)
                for index, found in findings.items()
                if index >= 0
                for finding in found
            )[:MAX_LISTED_FINDINGS],
            "shown": range(offset, shown),
            "checks": checks,
            "notes": notes,
            "thinking_on": thinking_on,
            "next": link(
                "/console/run/transcript",
                {**here, "after": body.next_cursor, "offset": str(shown)},
            )
            if body.next_cursor
            else "",
            "first": link("/console/run/transcript", here) if after else "",
            # The last page of a run that may still write follows its tail: each new
            # transcript record reloads this page up to it (``console-live.js``).
            "tail": path("v1", "runs", run_id, "records", "stream")
            if not body.next_cursor and not run.status.is_finished
            else "",
            "reload": link(
                "/console/fragments/run/transcript",
                {"run_id": run_id, "after": after, "offset": str(offset), "thinking": thinking},
            ),
            "status": run.status,
        }

    return await fragment(request, "fragments/transcript.html", load)
