"""One format for every log line of the service: JSON for collectors, text for a terminal.

``serve`` hands ``log_config(...)`` to uvicorn, which applies it in every worker: the root
logger writes to standard error through ``JsonFormatter`` or ``TextFormatter``, and
uvicorn's own loggers, SQLAlchemy's, Python's warnings and the service's all propagate to
it. Each line carries the ID of the request it was written for (``REQUEST_ID``), so the
traceback of a 500 names the ``request_id`` its body gave the client.

Log lines never carry tokens, payloads, checkpoints or request bodies: the access line
holds only fixed fields (``middleware.py``); SQLAlchemy hides bound parameters and its
row lines are dropped (``app/storage/database/engines.py``).
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import time
from enum import StrEnum
from typing import Any, Final

import pydantic_core

from .context import REQUEST_ID


class LogFormat(StrEnum):
    JSON = "json"
    TEXT = "text"


class LogLevel(StrEnum):
    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    DEBUG = "debug"


#: Attributes every ``LogRecord`` has (and uvicorn's colour copy of its message): the rest
#: are the fields a caller passed with ``extra=``.
_RECORD_ATTRIBUTES: Final = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
    "request_id",
}


_LEVELS: Final = {
    logging.DEBUG: "debug",
    logging.INFO: "info",
    logging.WARNING: "warning",
    logging.ERROR: "error",
    logging.CRITICAL: "critical",
}


@functools.lru_cache(maxsize=4)
def _utc_second(second: int) -> str:
    """Cached: many lines share a second."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))


def rfc3339(created: float) -> str:
    """UTC with milliseconds, as the API writes times: ``2026-11-30T01:02:03.456Z``."""
    second = int(created)
    return f"{_utc_second(second)}.{int((created - second) * 1000):03d}Z"


def request_id_of(record: logging.LogRecord) -> str:
    """The request a record was written for: given with ``extra=``, else the current one."""
    given = record.__dict__.get("request_id")
    return str(given) if given else REQUEST_ID.get()


def extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    return {
        key: value
        for key, value in record.__dict__.items()
        if key not in _RECORD_ATTRIBUTES and key[0] != "_"
    }


#: For what pydantic-core refuses (bytes that are not UTF-8): a value JSON cannot hold is
#: written as its ``str``.
_ENCODER: Final = json.JSONEncoder(default=str)


def _json(entry: dict[str, Any]) -> str:
    """``entry`` as one line of JSON: pydantic-core's encoder (a third of the stdlib's time:
    this runs once per request), the stdlib's for what it refuses."""
    try:
        return pydantic_core.to_json(entry, fallback=str, inf_nan_mode="null").decode()
    except (pydantic_core.PydanticSerializationError, ValueError):
        return _ENCODER.encode(entry)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time``, ``level``, ``logger``, ``message``, then
    ``request_id`` (when there is one), ``pid``, the record's extra fields, and the
    traceback as ``exception``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": rfc3339(record.created),
            "level": _LEVELS.get(record.levelno) or record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = request_id_of(record)
        if request_id:
            entry["request_id"] = request_id
        entry["pid"] = record.process
        standard = _RECORD_ATTRIBUTES
        for key, value in record.__dict__.items():
            if key not in standard and key[0] != "_":
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return _json(entry)


class TextFormatter(logging.Formatter):
    """``time level logger [request_id] message key=value ...`` (fields without a value
    left out), then any traceback."""

    def format(self, record: logging.LogRecord) -> str:
        request_id = request_id_of(record)
        parts = [rfc3339(record.created), f"{record.levelname:<7}", record.name]
        if request_id:
            parts.append(f"[{request_id}]")
        parts.append(record.getMessage())
        parts += [
            f"{key}={value}" for key, value in extra_fields(record).items() if value is not None
        ]
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return line


def service_formatter(format: str = LogFormat.JSON) -> logging.Formatter:
    """The formatter of ``format``; Python's warnings become log records from here on, and
    records skip the thread and process names no line shows (a lookup each)."""
    logging.captureWarnings(True)
    logging.logThreads = False
    logging.logMultiprocessing = False
    return JsonFormatter() if format == LogFormat.JSON else TextFormatter()


def default_format() -> LogFormat:
    """Text for a person at a terminal, JSON for everything else."""
    return LogFormat.TEXT if sys.stderr.isatty() else LogFormat.JSON


def log_config(format: LogFormat, level: LogLevel) -> dict[str, Any]:
    """uvicorn's ``log_config``: every logger of the service through one handler on
    standard error. uvicorn's access logger stays silent: the service writes its own
    access line (``middleware.py``)."""
    name = level.value.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"service": {"()": f"{__name__}.service_formatter", "format": format.value}},
        "handlers": {
            "service": {
                "class": "logging.StreamHandler",
                "formatter": "service",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"handlers": ["service"], "level": name},
        "loggers": {
            "uvicorn": {"handlers": [], "propagate": True, "level": name},
            "uvicorn.error": {"level": name},
            "uvicorn.access": {"handlers": [], "propagate": False},
            "runtime_store": {"level": name},
            # httpx logs each request at INFO: the console's in-process API calls
            # (app/console/api.py), which already have their own access line.
            "httpx": {"level": "WARNING"},
        },
    }
