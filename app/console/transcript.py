"""The console's transcript view: a run's conversation read through the transcript prefix
endpoint (``GET /v1/runs/{id}/transcript-records``, CONTRACT.md 12.3), page by page.

The first page fixes ``through``: the run's last record when the view opened. Every link
of the view carries it, so its pages are the pages of one prefix (later appends never
change them) and message numbers stay right while the run writes on; "latest" opens the
view again without it. The findings are those of the whole transcript's checks
(``GET /v1/runs/{id}/transcript?validate=…``), marked on the messages they name.
"""

from __future__ import annotations

from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runtime_store_client import InvalidTranscriptError

from .api import Api, ApiError, Problem, path
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
        body = await api.get(
            path("v1", "runs", run_id, "records"), {"cursor": str(record_id), "limit": "1"}
        )
    except ApiError as refused:
        if refused.problem.code != "invalid_argument":
            raise
        return -1
    return 1 if body["records"] else 0


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
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    """The findings of each validator on the whole transcript, or why it was not checked."""
    transcript_path = path("v1", "runs", run_id, "transcript")
    checks: dict[str, list[dict[str, Any]]] = {}
    notes: dict[str, str] = {}
    for validator, params in (
        ("planner", {"validate": "planner"}),
        ("bedrock", {"validate": "bedrock", "thinking": "true" if thinking_on else "false"}),
    ):
        # limit=1: the check reads the whole transcript, the page it returns is unused.
        problem = await api.problem_or_none(transcript_path, {**params, "limit": "1"})
        if problem is None:
            checks[validator] = []
        elif problem.code == "invalid_transcript":
            checks[validator] = problem.violations
        else:
            notes[validator] = f"{problem.code}: {problem.detail}"
    return checks, notes


def _messages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The page's messages; a payload that is not a message array is shown as the API
    shows it (422 ``invalid_transcript``), never as a server error."""
    try:
        return transcript_messages(records)
    except InvalidTranscriptError as broken:
        problem = Problem(
            status=broken.status, code=broken.code, title="Invalid argument", detail=str(broken)
        )
        raise ApiError(problem) from broken


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
        upto = through or await last_record_id(api, run_id)
        body = await api.get(
            path("v1", "runs", run_id, "transcript-records"),
            {"through": upto, "after": after, "limit": str(TRANSCRIPT_PAGE_RECORDS)},
        )
        messages = _messages(body["records"])
        thinking_on = thinking == "on" if thinking else thinking_used(messages)
        checks, notes = await _checks(api, run_id, thinking_on)
        here = {"run_id": run_id, "thinking": thinking, "through": upto}
        findings = findings_by_message(checks)
        return {
            "run_id": run_id,
            "through": upto,
            "latest": link("/console/run/transcript", {"run_id": run_id, "thinking": thinking}),
            "messages": conversation(messages, offset, findings),
            "whole": findings.get(-1, []),
            "listed": sorted(
                (index, finding)
                for index, found in findings.items()
                if index >= 0
                for finding in found
            )[:MAX_LISTED_FINDINGS],
            "shown": range(offset, offset + len(messages)),
            "checks": checks,
            "notes": notes,
            "thinking_on": thinking_on,
            "next": link(
                "/console/run/transcript",
                {**here, "after": body["next_cursor"], "offset": str(offset + len(messages))},
            )
            if body["next_cursor"]
            else "",
            "first": link("/console/run/transcript", here) if after else "",
        }

    return await fragment(request, "fragments/transcript.html", load)
