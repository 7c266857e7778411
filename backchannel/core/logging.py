"""Structured logs for the daemon: JSON lines when stderr is not a TTY (journald,
launchd log files), a short human format when it is.

Every record may carry extra fields through `extra={"fields": {...}}`; they are
merged into the JSON object, and appended as key=value in the human format.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

LOGGER_NAME = "backchannel"
_STANDARD = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        obj: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            for k, v in fields.items():
                obj.setdefault(k, v)
        for k, v in record.__dict__.items():  # plain `extra={...}` keys from other modules
            if k not in _STANDARD and k != "fields":
                obj.setdefault(k, v)
        if record.exc_info:
            obj["exc"] = self.formatException(record.exc_info)
        return json.dumps(obj, default=str, ensure_ascii=False)


class HumanFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = (
            f"{time.strftime('%H:%M:%S', time.localtime(record.created))} {record.levelname[0]} {record.getMessage()}"
        )
        fields = dict(getattr(record, "fields", None) or {})
        fields.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD and k != "fields"})
        if fields:
            base += " " + " ".join(f"{k}={v}" for k, v in fields.items())
        if record.exc_info:
            base += "\n" + self.formatException(record.exc_info)
        return base


def setup(level: str = "INFO", json_logs: bool | None = None, stream: Any = None) -> logging.Logger:
    """Configure the `backchannel` logger once (idempotent: handlers are replaced)."""
    stream = stream or sys.stderr
    if json_logs is None:
        json_logs = not (hasattr(stream, "isatty") and stream.isatty())
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if json_logs else HumanFormatter())
    logger = logging.getLogger(LOGGER_NAME)
    for h in list(logger.handlers):
        logger.removeHandler(h)
    logger.addHandler(handler)
    logger.setLevel(getattr(logging, str(level).upper(), logging.INFO))
    logger.propagate = False
    return logger


def get(name: str = "daemon") -> logging.Logger:
    return logging.getLogger(f"{LOGGER_NAME}.{name}")


def log(logger: logging.Logger, level: int, msg: str, **fields: Any) -> None:
    """Log `msg` with structured fields."""
    logger.log(level, msg, extra={"fields": fields})
