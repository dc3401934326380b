"""Logging: daily rolling files in ``<data_dir>/logs/`` plus stderr (never stdout)."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(logs_dir: Path | None, level: str = "INFO", keep_days: int = 14) -> None:
    """Route the root logger to stderr and, for the daemon, to ``logs/ai-memory.log``."""
    root = logging.getLogger()
    root.setLevel(level.upper())
    for handler in list(root.handlers):
        root.removeHandler(handler)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(stderr)
    if logs_dir is not None:
        logs_dir.mkdir(parents=True, exist_ok=True)
        daily = logging.handlers.TimedRotatingFileHandler(
            logs_dir / "ai-memory.log", when="midnight", backupCount=keep_days, utc=True,
        )
        daily.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(daily)
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
