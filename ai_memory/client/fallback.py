"""Local fallback search: what ``query`` answers when the server is unreachable, busy or failing.

The answer has the server's shape (``hits``, ``raw_hits``, ``streams``) plus labels a reader
cannot miss: ``fallback: "local"``, ``lexical: true`` (FTS5 bm25 over words; no embeddings, so
no semantic score or threshold applies), ``match: "and"|"or"`` and a ``note``. All words are
required first; when that finds nothing, any word may match, and the note says so.
"""

from __future__ import annotations

import re
from typing import Any

from ai_memory.client.local_index import Doc, LocalIndex
from ai_memory.client.outbox import Entry, Outbox

GLOBAL_PROJECT = "_global"
MAX_TERMS = 16
SNIPPET = 240
_WORD = re.compile(r"\w+", re.UNICODE)
_KIND_TYPES = {"handoff": "Handoff", "message": "Message"}


def terms(q: str) -> list[str]:
    seen: list[str] = []
    for word in _WORD.findall(q.lower()):
        if word not in seen:
            seen.append(word)
    return seen[:MAX_TERMS]


def fts_expr(words: list[str], mode: str) -> str:
    """Each word quoted (FTS5 syntax in a query must stay text), joined by AND or OR."""
    return f" {mode.upper()} ".join('"' + w.replace('"', '""') + '"' for w in words)


def search_local(index: LocalIndex, outbox: Outbox, q: str, *, project: str | None, all_projects: bool,
                 k: int, reason: str) -> dict[str, Any]:
    """The labelled local answer to a query (see the module docstring)."""
    words = terms(q)
    projects = None if all_projects or not project else {project, GLOBAL_PROJECT}
    index.refresh_wiki()
    hits, mode = [], "and"
    if words:
        hits = _hits(index, outbox, fts_expr(words, "and"), projects, k, words)
        if not hits and len(words) > 1:
            mode = "or"
            hits = _hits(index, outbox, fts_expr(words, "or"), projects, k, words)
    note = "local lexical search (the server was not used): " + reason
    if mode == "or":
        note += "; no result had every word, so these match any of them"
    return {"hits": hits, "raw_hits": [], "streams": ["local-fts"], "fallback": "local", "lexical": True,
            "match": mode, "note": note, "reason": reason}


def _hits(index: LocalIndex, outbox: Outbox, expr: str, projects: set[str] | None, k: int,
          words: list[str]) -> list[dict[str, Any]]:
    replaced = outbox.superseded_refs()  # corrected, even if only locally: out of the answer, as on the server
    found: list[tuple[float, dict[str, Any]]] = []
    for entry, rank in outbox.search(expr, projects, k + len(replaced)):
        if not {entry.local_id, entry.server_id, entry.server_path} & replaced:
            found.append((rank, _entry_hit(entry, words)))
    adopted = {h["path"] for _, h in found if h["path"]}
    for doc, rank in index.search(expr, projects, k + len(replaced)):
        if doc.path not in adopted and not {doc.path, doc.uid} & replaced:
            found.append((rank, _doc_hit(doc, words)))
    found.sort(key=lambda pair: pair[0])  # bm25: lower is better
    return [{**hit, "score": round(-rank, 4)} for rank, hit in found[:k]]


def _doc_hit(doc: Doc, words: list[str]) -> dict[str, Any]:
    return {"path": doc.path, "title": doc.title, "type": doc.type, "project": doc.project, "id": doc.uid,
            "snippet": snippet(doc.body, words), "source": doc.source, "pending": False}


def _entry_hit(entry: Entry, words: list[str]) -> dict[str, Any]:
    kind = str(entry.body.get("kind") or "note") if entry.kind == "memory" else entry.kind
    return {"path": entry.server_path or "", "title": entry.title, "type": _KIND_TYPES.get(kind, kind.title()),
            "project": entry.project or "", "id": entry.id, "local_id": entry.local_id,
            "snippet": snippet(entry.text, words), "source": "outbox", "pending": entry.state == "pending",
            "outbox_state": entry.state}


def snippet(text: str, words: list[str], width: int = SNIPPET) -> str:
    """A window of the text around the first word found."""
    flat = " ".join(text.split())
    low = flat.lower()
    at = min((i for i in (low.find(w) for w in words) if i >= 0), default=0)
    start = max(0, at - width // 4)
    cut = flat[start:start + width]
    return ("…" if start else "") + cut + ("…" if start + width < len(flat) else "")
