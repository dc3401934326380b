"""Numbered schema migrations, each applied once in its own transaction and recorded."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime, timezone

from ai_memory.core.errors import StorageError
from ai_memory.store import cache_stamp, fts_rows

# The tokenizer of the full-text indexes up to migration 14 (15 replaced them: fts_rows).
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2 tokenchars '_-'"


def _rebuilt_by_a_later_migration(conn: sqlite3.Connection) -> None:
    """A rebuild of the full-text indexes that a later migration's rebuild (22) makes again:
    a database older than both is rebuilt once, not twice."""


def _llm_calls_counted(conn: sqlite3.Connection) -> None:
    """``llm_jobs`` gains the state ``capped`` (SQLite cannot change a CHECK: the table is made
    again from its own CREATE statement, the state added), the attempts made before its latest
    queueing and its model calls; ``llm_usage`` counts the calls of each UTC day."""
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'llm_jobs'").fetchone()
    wider = sql.replace("'failed'))", "'failed', 'capped'))", 1).replace("llm_jobs", "llm_jobs_new", 1)
    if "'capped'" not in wider:
        raise StorageError("llm_jobs is not the table migration 17 made", detail=sql[:200])
    for statement in (
        wider,
        "INSERT INTO llm_jobs_new SELECT * FROM llm_jobs",
        "DROP TABLE llm_jobs",
        "ALTER TABLE llm_jobs_new RENAME TO llm_jobs",
        "ALTER TABLE llm_jobs ADD COLUMN queued_attempts INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE llm_jobs ADD COLUMN model_calls INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX llm_jobs_due ON llm_jobs(state, not_before)",
        "CREATE TABLE llm_usage (day TEXT PRIMARY KEY, calls INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID",
    ):
        conn.execute(statement)


# A migration is SQL, or a function of the connection for one that needs Python (analysed text).
MIGRATIONS: tuple[tuple[int, str, str | Callable[[sqlite3.Connection], None]], ...] = (
    (
        1,
        "sessions, observations with FTS5, idempotency keys",
        f"""
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            agent TEXT NOT NULL,
            project TEXT,
            cwd TEXT,
            host TEXT,
            started_at TEXT NOT NULL,
            last_event_at TEXT NOT NULL,
            ended_at TEXT,
            observation_count INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX sessions_project ON sessions(project, last_event_at);

        CREATE TABLE observations (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            agent TEXT NOT NULL,
            event TEXT NOT NULL,
            source_event TEXT,
            project TEXT,
            cwd TEXT,
            tool_name TEXT,
            prompt_id TEXT,
            occurred_at TEXT NOT NULL,
            received_at TEXT NOT NULL,
            title TEXT NOT NULL,
            body TEXT NOT NULL,
            payload TEXT NOT NULL,
            redactions TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX observations_session ON observations(session_id, occurred_at, rowid);
        CREATE INDEX observations_project ON observations(project, occurred_at);

        CREATE VIRTUAL TABLE observations_fts USING fts5(
            title, body, content='observations', content_rowid='rowid',
            tokenize="{FTS_TOKENIZE}"
        );

        CREATE TABLE idempotency_keys (
            key TEXT PRIMARY KEY,
            observation_id TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        """,
    ),
    (
        2,
        "wiki pages with FTS5, entities, links; handoffs; compiled sessions",
        f"""
        CREATE TABLE pages (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            project TEXT NOT NULL,
            type TEXT NOT NULL,
            title TEXT NOT NULL,
            tier TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '',
            body TEXT NOT NULL,
            frontmatter TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            created TEXT,
            updated TEXT,
            session_id TEXT,
            agent TEXT,
            pinned INTEGER NOT NULL DEFAULT 0,
            expires_at TEXT,
            supersedes TEXT,
            superseded_by TEXT,
            problems TEXT NOT NULL DEFAULT '[]',
            indexed_at TEXT NOT NULL,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_access_at TEXT
        );
        CREATE INDEX pages_project ON pages(project, type);
        CREATE INDEX pages_session ON pages(session_id);
        CREATE INDEX pages_title ON pages(lower(title));

        CREATE VIRTUAL TABLE pages_fts USING fts5(
            title, summary, body, tokenize="{FTS_TOKENIZE}"
        );

        CREATE TABLE page_entities (
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            entity TEXT NOT NULL,
            display TEXT NOT NULL,
            source TEXT NOT NULL,
            PRIMARY KEY (page_id, entity)
        );
        CREATE INDEX page_entities_entity ON page_entities(entity);

        CREATE TABLE links (
            src_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            target TEXT NOT NULL,
            kind TEXT NOT NULL,
            PRIMARY KEY (src_id, target, kind)
        );
        CREATE INDEX links_target ON links(target);

        CREATE TABLE handoffs (
            id TEXT PRIMARY KEY,
            session_id TEXT,
            project TEXT,
            cwd TEXT,
            from_agent TEXT,
            to_agent TEXT,
            summary TEXT NOT NULL DEFAULT '',
            open_questions TEXT NOT NULL DEFAULT '[]',
            files_touched TEXT NOT NULL DEFAULT '[]',
            next_steps TEXT NOT NULL DEFAULT '[]',
            kind TEXT NOT NULL DEFAULT 'auto',
            state TEXT NOT NULL DEFAULT 'open',
            page_path TEXT,
            created_at TEXT NOT NULL,
            accepted_at TEXT,
            accepted_by_session TEXT
        );
        CREATE UNIQUE INDEX handoffs_auto_session ON handoffs(session_id) WHERE kind = 'auto';
        CREATE INDEX handoffs_project ON handoffs(project, state, created_at);

        ALTER TABLE sessions ADD COLUMN page_path TEXT;
        ALTER TABLE sessions ADD COLUMN compiled_at TEXT;
        """,
    ),
    (
        3,
        "page chunks, embeddings keyed by content hash, page history for as_of",
        f"""
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            ord INTEGER NOT NULL,
            text TEXT NOT NULL,
            content_hash TEXT NOT NULL
        );
        CREATE INDEX chunks_page ON chunks(page_id);
        CREATE INDEX chunks_hash ON chunks(content_hash);

        CREATE TABLE embeddings (
            content_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (content_hash, model)
        );

        ALTER TABLE pages ADD COLUMN stem TEXT;
        CREATE INDEX pages_stem ON pages(stem);

        ALTER TABLE observations ADD COLUMN embed_hash TEXT;
        CREATE INDEX observations_embed ON observations(embed_hash);

        CREATE TABLE page_history (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            project TEXT NOT NULL,
            type TEXT NOT NULL,
            title TEXT NOT NULL,
            summary TEXT NOT NULL,
            body TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            superseded_by TEXT,
            valid_from TEXT NOT NULL,
            valid_to TEXT
        );
        CREATE INDEX page_history_path ON page_history(path, valid_from);
        CREATE VIRTUAL TABLE page_history_fts USING fts5(title, summary, body, tokenize="{FTS_TOKENIZE}");
        """,
    ),
    (
        4,
        "structured memories (ids, scope, owner, duplicate hash); handoff owners; messages",
        """
        ALTER TABLE pages ADD COLUMN uid TEXT;
        CREATE INDEX pages_uid ON pages(uid);
        ALTER TABLE pages ADD COLUMN scope TEXT NOT NULL DEFAULT 'project';
        ALTER TABLE pages ADD COLUMN owner TEXT;
        ALTER TABLE pages ADD COLUMN norm_hash TEXT;
        CREATE INDEX pages_norm ON pages(project, type, norm_hash);
        ALTER TABLE pages ADD COLUMN idempotency_key TEXT;
        CREATE INDEX pages_idempotency ON pages(idempotency_key) WHERE idempotency_key IS NOT NULL;
        CREATE INDEX pages_supersedes ON pages(supersedes) WHERE supersedes IS NOT NULL;
        CREATE INDEX pages_updated ON pages(project, type, updated);

        ALTER TABLE handoffs ADD COLUMN owner TEXT NOT NULL DEFAULT 'local';
        ALTER TABLE handoffs ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE handoffs ADD COLUMN model TEXT;

        CREATE TABLE messages (
            id TEXT PRIMARY KEY,
            to_project TEXT NOT NULL,
            from_project TEXT,
            from_agent TEXT,
            owner TEXT NOT NULL DEFAULT 'local',
            body TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT,
            state TEXT NOT NULL DEFAULT 'open',
            popped_at TEXT,
            popped_by_session TEXT
        );
        CREATE INDEX messages_to ON messages(to_project, state, created_at);
        """,
    ),
    (
        5,
        "page usage and feedback kept by path (survives reindex); tombstones of forgotten pages",
        """
        CREATE TABLE page_stats (
            path TEXT PRIMARY KEY,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_access_at TEXT,
            salience REAL NOT NULL DEFAULT 1.0,
            feedback_count INTEGER NOT NULL DEFAULT 0,
            last_feedback_at TEXT
        );
        INSERT INTO page_stats(path, access_count, last_access_at)
            SELECT path, access_count, last_access_at FROM pages WHERE access_count > 0;

        CREATE TABLE tombstones (
            path TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            type TEXT NOT NULL,
            title TEXT NOT NULL,
            tier TEXT NOT NULL,
            content_hash TEXT,
            reason TEXT NOT NULL,
            removed_at TEXT NOT NULL,
            git_commit TEXT
        );
        CREATE INDEX tombstones_removed ON tombstones(removed_at);
        """,
    ),
    (
        6,
        "team users (token hashes), an append-only audit log, owners of observations and page versions",
        """
        CREATE TABLE users (
            name TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            last_used_at TEXT,
            revoked_at TEXT
        );

        CREATE TABLE audit (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            user TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX audit_at ON audit(at);
        CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
        CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

        ALTER TABLE observations ADD COLUMN owner TEXT NOT NULL DEFAULT 'local';

        ALTER TABLE page_history ADD COLUMN scope TEXT;
        ALTER TABLE page_history ADD COLUMN owner TEXT;
        UPDATE page_history SET
            scope = (SELECT p.scope FROM pages p WHERE p.path = page_history.path),
            owner = (SELECT p.owner FROM pages p WHERE p.path = page_history.path);
        """,
    ),
    (
        7,
        "tombstones know the removed page's id, scope and owner (export hides others' private pages)",
        """
        ALTER TABLE tombstones ADD COLUMN uid TEXT;
        ALTER TABLE tombstones ADD COLUMN scope TEXT;
        ALTER TABLE tombstones ADD COLUMN owner TEXT;
        """,
    ),
    (
        8,
        "idempotency keys for manual handoffs and messages (a client's retry never duplicates)",
        """
        ALTER TABLE handoffs ADD COLUMN idempotency_key TEXT;
        CREATE UNIQUE INDEX handoffs_idempotency ON handoffs(owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
        ALTER TABLE messages ADD COLUMN idempotency_key TEXT;
        CREATE UNIQUE INDEX messages_idempotency ON messages(owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
        """,
    ),
    (
        9,
        "the entity stream reads page ids from the entity index alone (no lookup per matching row)",
        """
        DROP INDEX page_entities_entity;
        CREATE INDEX page_entities_entity ON page_entities(entity, page_id);
        """,
    ),
    (
        10,
        "sentence vectors of conversational observations (each sentence with its speaker)",
        """
        CREATE TABLE observation_sentences (
            id INTEGER PRIMARY KEY,
            obs_rowid INTEGER NOT NULL REFERENCES observations(rowid) ON DELETE CASCADE,
            ord INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            UNIQUE (obs_rowid, ord)
        );
        CREATE INDEX observation_sentences_hash ON observation_sentences(content_hash);
        ALTER TABLE observations ADD COLUMN sentences_done INTEGER NOT NULL DEFAULT 0;
        UPDATE observations SET sentences_done = 1
            WHERE embed_hash IS NULL
               OR event NOT IN ('user-prompt', 'stop', 'subagent-stop', 'pre-compact', 'post-compact');
        CREATE INDEX observations_unsplit ON observations(rowid) WHERE sentences_done = 0;
        """,
    ),
    (
        11,
        "observations_fts knows each observation's project, so a search reads only the turns in its scope",
        f"""
        DROP TABLE observations_fts;
        CREATE VIRTUAL TABLE observations_fts USING fts5(
            title, body, project, content='observations', content_rowid='rowid',
            tokenize="{FTS_TOKENIZE}"
        );
        INSERT INTO observations_fts(observations_fts) VALUES ('rebuild');
        """,
    ),
    (
        12,
        "chunk ids are never reused (an edited page's new chunks must not look like its old ones)",
        """
        CREATE TABLE chunks_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            ord INTEGER NOT NULL,
            text TEXT NOT NULL,
            content_hash TEXT NOT NULL
        );
        INSERT INTO chunks_new(id, page_id, ord, text, content_hash) SELECT id, page_id, ord, text, content_hash
            FROM chunks;
        DROP TABLE chunks;
        ALTER TABLE chunks_new RENAME TO chunks;
        CREATE INDEX chunks_page ON chunks(page_id);
        CREATE INDEX chunks_hash ON chunks(content_hash);
        """,
    ),
    (
        13,
        "pages_fts knows each page's project, so a search reads only the pages in its scope",
        f"""
        CREATE VIRTUAL TABLE pages_fts_scoped USING fts5(
            title, summary, body, project, tokenize="{FTS_TOKENIZE}"
        );
        INSERT INTO pages_fts_scoped(rowid, title, summary, body, project)
            SELECT f.rowid, f.title, f.summary, f.body, p.project FROM pages_fts f JOIN pages p ON p.id = f.rowid;
        DROP TABLE pages_fts;
        ALTER TABLE pages_fts_scoped RENAME TO pages_fts;
        """,
    ),
    (
        14,
        "conversational turns keep their piece vectors (one bit a dimension) for late interaction, and"
        " how many turns hold each word (the empty word: how many turns there are)",
        """
        CREATE TABLE token_vectors (
            content_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            count INTEGER NOT NULL,
            bits BLOB NOT NULL,
            PRIMARY KEY (content_hash, model)
        );
        CREATE TABLE piece_counts (
            model TEXT NOT NULL,
            word TEXT NOT NULL,
            turns INTEGER NOT NULL,
            PRIMARY KEY (model, word)
        ) WITHOUT ROWID;
        UPDATE observations SET sentences_done = 0
            WHERE embed_hash IS NOT NULL AND embed_hash != ''
              AND event IN ('user-prompt', 'stop', 'subagent-stop', 'pre-compact', 'post-compact');
        """,
    ),
    (
        15,
        "page history is derived from the wiki's git history (a reindex restores it): the commit it"
        " has been read up to; the history recorded at index time is read again from git",
        """
        CREATE TABLE history_cursor (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            commit_id TEXT NOT NULL
        );
        DELETE FROM page_history;
        DELETE FROM page_history_fts;
        """,
    ),
    (
        16,
        "full-text indexes hold analysed terms (identifiers whole and split, one stemmer with the reranker)",
        fts_rows.rebuild,
    ),
    (
        17,
        "the queue of LLM consolidation jobs: one per session, leased by the one worker",
        """
        CREATE TABLE llm_jobs (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL UNIQUE,
            page_path TEXT NOT NULL,
            page_sha256 TEXT NOT NULL,
            written_sha256 TEXT,
            state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            not_before TEXT NOT NULL,
            lease_token TEXT,
            lease_until TEXT,
            last_error TEXT,
            proposal TEXT,
            outcome TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX llm_jobs_due ON llm_jobs(state, not_before);
        """,
    ),
    (
        18,
        "project aliases and moved sessions (derived from the wiki's projects file): old names resolve",
        """
        CREATE TABLE project_aliases (
            alias TEXT PRIMARY KEY,
            project TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE session_projects (
            session_id TEXT PRIMARY KEY,
            project TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX handoffs_session ON handoffs(session_id);
        CREATE INDEX messages_from ON messages(from_project);
        """,
    ),
    (
        19,
        "a session's page found from the index alone (a search asks for hundreds of sessions' pages)",
        """
        CREATE INDEX pages_session_type ON pages(session_id, type);
        DROP INDEX pages_session;
        """,
    ),
    (
        20,
        "observations owing only their sentences found without reading the embedding backlog",
        """
        DROP INDEX observations_unsplit;
        CREATE INDEX observations_unsplit ON observations(rowid)
            WHERE sentences_done = 0 AND embed_hash IS NOT NULL;
        """,
    ),
    (
        21,
        "a dotted name's own names are terms of the full-text indexes (URL.with_name holds with_name)",
        _rebuilt_by_a_later_migration,
    ),
    (
        22,
        "a version inside a name is a term of the full-text indexes (v1.7.1 holds 1.7.1, 3.13t holds 3.13)",
        fts_rows.rebuild,
    ),
    (
        23,
        "model calls counted per session and per UTC day, a job a cap refused is 'capped', a re-queue keeps attempts",
        _llm_calls_counted,
    ),
    (
        24,
        "what memory handed an agent in each session (the briefing's pages, prompt recall's items): never twice",
        """
        CREATE TABLE recall_given (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            owner TEXT NOT NULL,
            path TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('briefing', 'prompt')),
            chars INTEGER NOT NULL DEFAULT 0,
            line TEXT NOT NULL DEFAULT '',
            confidence REAL,
            given_at TEXT NOT NULL,
            UNIQUE (session_id, owner, path)
        );
        """,
    ),
    (
        25,
        "each database file's own id and a count of rows rewritten in place: what caches of its rows key on",
        cache_stamp.CREATE_SQL,
    ),
)


def current_version(conn: sqlite3.Connection) -> int:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def migrate(conn: sqlite3.Connection, upto: int | None = None) -> int:
    """Apply every migration newer than the database (up to ``upto``, to build an older schema
    for an upgrade test); return the resulting version.

    A database newer than this code is refused rather than guessed at.
    """
    version = current_version(conn)
    latest = MIGRATIONS[-1][0]
    if version > latest:
        raise StorageError(
            f"database schema v{version} is newer than this ai-memory (v{latest})",
            detail="upgrade ai-memory or restore an older backup",
        )
    for number, name, sql in MIGRATIONS:
        if number <= version or (upto is not None and number > upto):
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if callable(sql):
                sql(conn)
            else:
                for statement in _statements(sql):
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (number, name, datetime.now(timezone.utc).isoformat()),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        version = number
    return version


def _statements(sql: str) -> list[str]:
    """Split a migration into statements (sqlite3.complete_statement keeps quoted ';' intact)."""
    out, buf = [], ""
    for line in sql.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
