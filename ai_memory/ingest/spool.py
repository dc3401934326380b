"""Draining ``spool/``: events that hook clients saved but could not deliver themselves.

A spool file is one JSON envelope ``{agent, event, idempotency_key, host, captured_at, payload}`` written
atomically by a hook client. Delivery is at-least-once; the idempotency key makes a second
delivery harmless. Unreadable files move to ``spool/bad/``; past the caps (count, age) the
oldest files are dropped and counted, never silently.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_memory.core.errors import AiMemoryError, InputError
from ai_memory.core.spool_record import parse_spool_record
from ai_memory.ingest.hooks import ingest_event
from ai_memory.store.observations import InsertResult
from ai_memory.store.writer import Writer

log = logging.getLogger(__name__)


@dataclass
class SpoolStats:
    delivered: int = 0
    duplicates: int = 0
    rejected: int = 0
    bad: int = 0
    dropped_count_cap: int = 0
    dropped_age_cap: int = 0
    last_drain_at: float | None = None
    backlog: int = 0
    bad_files: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def spool_files(spool_dir: Path) -> list[Path]:
    """Complete spool files, oldest first (names start with a millisecond timestamp)."""
    try:
        return sorted(p for p in spool_dir.glob("*.json") if p.is_file())
    except OSError:
        return []


def _enforce_caps(files: list[Path], max_files: int, max_age_s: float, stats: SpoolStats) -> list[Path]:
    now = time.time()
    kept = []
    for path in files:
        try:
            too_old = now - path.stat().st_mtime > max_age_s
        except FileNotFoundError:
            continue
        if too_old:
            path.unlink(missing_ok=True)
            stats.dropped_age_cap += 1
            log.warning("spool: dropped %s, older than the age cap", path.name)
        else:
            kept.append(path)
    excess = len(kept) - max_files
    for path in kept[:max(0, excess)]:
        path.unlink(missing_ok=True)
        stats.dropped_count_cap += 1
        log.warning("spool: dropped %s, beyond the %d-file cap", path.name, max_files)
    return kept[max(0, excess):]


def _quarantine(path: Path, reason: str, stats: SpoolStats) -> None:
    bad_dir = path.parent / "bad"
    bad_dir.mkdir(exist_ok=True, mode=0o700)
    try:
        os.replace(path, bad_dir / path.name)
    except FileNotFoundError:
        return
    stats.bad += 1
    stats.bad_files = sorted(p.name for p in bad_dir.glob("*"))[-100:]
    log.warning("spool: moved %s to spool/bad/ (%s)", path.name, reason)


async def _deliver(writer: Writer, path: Path, stats: SpoolStats,
                   on_stored: Callable[[InsertResult], None] | None) -> bool:
    """Deliver one spool file; True when it is now stored (new or duplicate) and removed."""
    try:
        envelope = parse_spool_record(path.read_bytes())
    except FileNotFoundError:
        return False  # its hook client delivered it and removed it meanwhile
    except (ValueError, UnicodeDecodeError) as exc:
        _quarantine(path, f"not JSON: {exc}", stats)
        return False
    if not isinstance(envelope, dict) or not isinstance(envelope.get("payload"), dict):
        _quarantine(path, "not an ai-memory spool envelope", stats)
        return False
    try:
        result = await ingest_event(
            writer, envelope["payload"], agent=str(envelope.get("agent") or "unknown"),
            event=envelope.get("event"), idempotency_key=envelope.get("idempotency_key"),
            host=envelope.get("host"), client_os=envelope.get("os"),
            captured_at=envelope.get("captured_at"), wait_for_room=True,
        )
    except InputError as exc:
        stats.rejected += 1
        _quarantine(path, exc.message, stats)
        return False
    except AiMemoryError:
        raise  # storage trouble (full queue, full disk): the file stays for the next drain
    except Exception as exc:  # a file we cannot process must not fail again every drain
        log.exception("spool: %s could not be processed", path.name)
        stats.rejected += 1
        _quarantine(path, f"could not be processed: {type(exc).__name__}: {exc}"[:300], stats)
        return False
    path.unlink(missing_ok=True)
    if on_stored is not None:
        on_stored(result)
    if result.duplicate:
        stats.duplicates += 1
    else:
        stats.delivered += 1
    return True


async def drain_once(writer: Writer, spool_dir: Path, *, max_files: int, max_age_days: float,
                     stats: SpoolStats, chunk: int = 128,
                     on_stored: Callable[[InsertResult], None] | None = None) -> int:
    """Deliver every spooled event once; return how many are now stored.

    Files go in chunks submitted together, so one group commit carries many of them.
    """
    files = _enforce_caps(spool_files(spool_dir), max_files, max_age_days * 86400, stats)
    done = 0
    for start in range(0, len(files), chunk):
        results = await asyncio.gather(*(_deliver(writer, p, stats, on_stored) for p in files[start:start + chunk]))
        done += sum(results)
    stats.last_drain_at = time.time()
    stats.backlog = len(spool_files(spool_dir))
    return done
