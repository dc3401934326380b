"""Short text renderings of tool results: what a model reads when it ignores structured content.

Each names the ids and paths an agent needs for its next call, and stays small (hosts warn
above ~10,000 tokens of tool output). A text that quotes recorded data (pages, snippets,
handoffs, messages, observations, the briefing) comes labelled and fenced as data
(``core.fence.recorded``), every quoted value on one line with fence markers neutralised.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from ai_memory.core.fence import one_line, recorded

SNIPPET = 240
Render = Callable[[Mapping[str, Any]], str]


def _one_line(text: object, limit: int = SNIPPET) -> str:
    return one_line(text, limit)


def _recorded(render: Render) -> Render:
    """The rendering quotes recorded text: label and fence it."""
    @functools.wraps(render)
    def labelled(data: Mapping[str, Any]) -> str:
        return recorded(render(data))
    return labelled


@_recorded
def query(data: Mapping[str, Any]) -> str:
    hits, raw = data["hits"], data["raw_hits"]
    if data.get("fallback") == "local":
        return _local_query(data)
    if not hits and not raw:
        return "no matches"
    lines = [f"{i}. {_one_line(h['title'])} [{h['type']}, {h['project']}, score {h['score']}]\n   {h['path']}\n"
             f"   {_one_line(h['snippet'])}" for i, h in enumerate(hits, 1)]
    if raw:
        lines.append("no page matched; observations:" if not hits else "observations:")
        lines += [f"- {str(r.get('occurred_at', ''))[:16]} session {r.get('session_id')}: {_one_line(r.get('snippet'))}"
                  for r in raw]
    return "\n".join(lines)


def _local_query(data: Mapping[str, Any]) -> str:
    """The server was not reached: say so first, and that the ranking is lexical, not semantic."""
    lines = [f"[fallback: local, lexical] {data.get('note', '')}"]
    for i, h in enumerate(data["hits"], 1):
        pending = ", pending (not on the server yet)" if h.get("pending") else ""
        lines.append(f"{i}. {_one_line(h['title'])} [{h['type']}, {h['project']}{pending}]\n   {h['path'] or h.get('id')}\n"
                     f"   {_one_line(h['snippet'])}")
    return "\n".join(lines if data["hits"] else [*lines, "no local matches"])


@_recorded
def page(data: Mapping[str, Any]) -> str:
    fm = data.get("frontmatter") or {}
    head = [f"# {_one_line(data['title'])}", f"path: {data['path']}", f"type: {data['type']}, project: {data['project']}"]
    if data.get("uid"):
        head.append(f"id: {data['uid']}")
    if data.get("revision"):
        head.append(f"version: {data['revision']['short']} of {data['revision']['time'][:19]} (not the current text)")
    if fm.get("superseded_by"):
        head.append(f"SUPERSEDED by {fm['superseded_by']}: read that one instead")
    if data.get("lineage"):
        head.append("lineage: " + " -> ".join(str(link.get("id") or link.get("path")) for link in data["lineage"]))
    tail = ["", "[cut: raise max_chars to read more]"] if data.get("truncated") else []
    return "\n".join([*head, "", data["body"].strip(), *tail])


@_recorded
def recent(data: Mapping[str, Any]) -> str:
    lines = ["pages:"] + [f"- {str(p.get('updated') or '')[:16]} {_one_line(p['title'])} [{p['type']}] {p['path']}"
                          for p in data["pages"]]
    lines += ["sessions:"] + [f"- {str(s.get('last_event_at') or '')[:16]} {s['id']} ({s.get('agent')}, "
                              f"{s.get('events')} events) {s.get('cwd') or ''}".rstrip() for s in data["sessions"]]
    return "\n".join(lines)


def status(data: Mapping[str, Any]) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in data["counts"].items())
    writer = data.get("writer") or {}
    embed = data.get("embeddings") or {}
    return (f"ai-memory {data['version']} running, data dir {data['data_dir']}\n{counts}\n"
            f"writer queue {writer.get('queue_depth')}, embeddings {'on' if embed.get('enabled') else 'off'}")


def meta(data: Mapping[str, Any]) -> str:
    scope = data["project"] or "all projects"
    lines = [f"memories in {scope} (live, by scope and kind):"]
    lines += [f"- {s}: " + ", ".join(f"{k} {n}" for k, n in kinds.items()) for s, kinds in data["counts"].items()]
    lines.append(f"superseded {data['superseded']}, expired {data['expired']}")
    lines.append("projects: " + ", ".join(f"{p['project']} ({p['pages']} pages, {p['sessions']} sessions)"
                                          for p in data["projects"][:20]))
    lines.append("agents: " + ", ".join(f"{a['agent']} ({a['sessions']})" for a in data["agents"]))
    return "\n".join(lines)


@_recorded
def briefing(data: Mapping[str, Any]) -> str:
    return data["text"].strip() or f"nothing to brief for {data['project']} yet"


@_recorded
def observations(data: Mapping[str, Any]) -> str:
    lines = [f"session {data['session_id']}: {data['total']} observations"
             + (f", first {len(data['observations'])} shown" if data["truncated"] else "")]
    for o in data["observations"]:
        tool = f" {o['tool_name']}" if o.get("tool_name") else ""
        lines.append(f"- {str(o.get('occurred_at') or '')[:19]} {o.get('event')}{tool}: "
                     f"{_one_line(o.get('body') or o.get('title'), 300)}")
    return "\n".join(lines)


@_recorded
def lint(data: Mapping[str, Any]) -> str:
    if data["clean"]:
        return f"no findings in {data['pages']} pages"
    lines = [f"{data['total']} findings in {data['pages']} pages"
             + (f", first {len(data['findings'])} shown" if data["truncated"] else "")]
    for f in data["findings"]:
        lines.append(f"- {f['rule']}: {f['path']}: {_one_line(f['detail'], 200)}\n  fix: {_one_line(f['fix'], 300)}")
    return "\n".join(lines)


def stored(data: Mapping[str, Any]) -> str:
    if data.get("pending"):  # the server was unreachable: the local outbox holds it
        return f"pending: id {data['id']} ({data.get('note', 'queued in the local outbox')})"
    verb = "stored" if data["created"] else "already stored (same idempotency_key)"
    text = f"{verb}: id {data['id']}, path {data['path']}"
    return text + (f"; supersedes {data['supersedes']}" if data.get("supersedes") else "")


def deleted(data: Mapping[str, Any]) -> str:
    return f"deleted {data['deleted']}" + (f" (id {data['id']})" if data.get("id") else "")


def feedback(data: Mapping[str, Any]) -> str:
    return (f"recorded {data['signal']} for {data['path']}: salience {data['salience_before']:.2f} -> "
            f"{data['salience']:.2f}")


@_recorded
def handoff(h: Mapping[str, Any]) -> str:
    return _handoff(h)


def _handoff(h: Mapping[str, Any]) -> str:
    lines = [f"handoff {h['id']} [{h['state']}] project {h.get('project')}, from {h.get('from_agent') or 'an agent'} "
             f"at {str(h.get('created_at') or '')[:16]}", f"summary: {_one_line(h.get('summary'), 1500)}"]
    for title, key in (("next steps", "next_steps"), ("open questions", "open_questions"),
                       ("files touched", "files_touched")):
        if h.get(key):
            lines.append(f"{title}:")
            lines += [f"- {_one_line(item, 400)}" for item in h[key][:20]]
    return "\n".join(lines)


@_recorded
def handoffs(data: Mapping[str, Any]) -> str:
    found = data["handoffs"]
    if not found:
        return "no handoffs"
    return "\n".join(f"- {h['id']} [{h['state']}] {h.get('project')}: {_one_line(h.get('summary'), 200)}"
                     for h in found)


@_recorded
def accepted(data: Mapping[str, Any]) -> str:
    return _handoff(data["handoff"]) if data["handoff"] else "no open handoff for this directory"


@_recorded
def message(m: Mapping[str, Any]) -> str:
    return _message(m)


def _message(m: Mapping[str, Any]) -> str:
    origin = " / ".join(x for x in (m.get("from_project"), m.get("from_agent")) if x) or "another project"
    return (f"message {m['id']} [{m['state']}] to {m['to_project']} from {origin} "
            f"at {str(m.get('created_at') or '')[:16]}: {_one_line(m['body'], 1500)}")


@_recorded
def messages(data: Mapping[str, Any]) -> str:
    return "\n".join(_message(m) for m in data["messages"]) or "no messages"
