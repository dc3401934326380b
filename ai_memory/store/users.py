"""Team users in SQLite: name, SHA-256 of the token, created, last used, revoked.

Jobs (``fn(tx)``) for the writer and read queries; the plain token never reaches this module.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.errors import Conflict, NotFound
from ai_memory.core.users import visible_sql
from ai_memory.store.writer import Job, WriteTx

_PUBLIC = "name, created_at, last_used_at, revoked_at"


def add_user(name: str, hashed: str, now: str) -> Job[dict[str, Any]]:
    """A job adding ``name``; a revoked name may be added again (a new token, the old one stays dead)."""

    def job(tx: WriteTx) -> dict[str, Any]:
        row = tx.conn.execute("SELECT revoked_at FROM users WHERE name = ?", (name,)).fetchone()
        if row is not None and row["revoked_at"] is None:
            raise Conflict("user exists", detail=f"{name} already has a token; revoke it first to issue a new one")
        tx.conn.execute(
            "INSERT INTO users(name, token_hash, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET"
            " token_hash = excluded.token_hash, created_at = excluded.created_at, last_used_at = NULL,"
            " revoked_at = NULL", (name, hashed, now))
        return _one(tx.conn, name)

    return job


def revoke_user(name: str, now: str) -> Job[dict[str, Any]]:
    """A job revoking ``name``'s token (revoking twice keeps the first time)."""

    def job(tx: WriteTx) -> dict[str, Any]:
        cur = tx.conn.execute("UPDATE users SET revoked_at = COALESCE(revoked_at, ?) WHERE name = ?", (now, name))
        if cur.rowcount == 0:
            raise NotFound("no such user", detail=name)
        return _one(tx.conn, name)

    return job


def touch_user(name: str, now: str) -> Job[None]:
    def job(tx: WriteTx) -> None:
        tx.conn.execute("UPDATE users SET last_used_at = ? WHERE name = ?", (now, name))

    return job


def _one(conn: sqlite3.Connection, name: str) -> dict[str, Any]:
    return dict(conn.execute(f"SELECT {_PUBLIC} FROM users WHERE name = ?", (name,)).fetchone())


def list_users(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(f"SELECT {_PUBLIC} FROM users ORDER BY name")]


def active_token_hashes(conn: sqlite3.Connection) -> dict[str, str]:
    """token hash → user name, for every token not revoked."""
    rows = conn.execute("SELECT token_hash, name FROM users WHERE revoked_at IS NULL").fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def hidden_page_paths(conn: sqlite3.Connection, owner: str) -> set[str]:
    """Paths of private pages ``owner`` may not see (for outputs that list pages, such as lint)."""
    rows = conn.execute(f"SELECT path FROM pages WHERE NOT {visible_sql()}", (owner,)).fetchall()
    return {str(r[0]) for r in rows}


def user_names(conn: sqlite3.Connection) -> list[str]:
    """Every team user's name, revoked or not."""
    return [str(r[0]) for r in conn.execute("SELECT name FROM users")]


def count_users(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM users").fetchone()[0])
