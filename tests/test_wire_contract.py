"""The wire contract (``core.wire``) is what the daemon really does: every route it serves is in
the schema and the other way round, each route answers with the status and the fields the schema
declares (no field it does not name, none of another type), a body that breaks the schema is a
400 naming the field, and the OpenAPI document the daemon serves is the one made from the schema."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from openapi_spec_validator import validate
from pydantic import ValidationError

from ai_memory.core import wire
from ai_memory.core.clock import utc_day
from ai_memory.core.openapi import document
from ai_memory.core.page import MEMORY_KINDS, SCOPES, TYPE_OF_KIND
from ai_memory.core.retention import FEEDBACK_DELTAS
from conftest import REPO, Daemon
from test_team import add_user, call
from test_wiki_sessions import drive_session

SERVER = REPO / "ai_memory" / "server"
ROUTES = {(r.method, r.path): r for r in wire.ROUTES}


def _served_routes() -> set[tuple[str, str]]:
    """Every JSON route the server's modules declare (the web view's HTML pages aside)."""
    found = set()
    for path in [*SERVER.glob("routes_*.py"), SERVER / "ui" / "routes_login.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "routes" \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found |= {(node.func.attr.upper(), p) for p in _expanded(node.args[0].value)}
    return {(m, p) for m, p in found if not p.startswith("/ui")}


def _expanded(path: str) -> list[str]:
    """aiohttp's ``{verb:rename|merge}`` as the paths it matches."""
    match = re.search(r"\{(\w+):([\w|]+)\}", path)
    if not match:
        return [path]
    return [path[:match.start()] + word + path[match.end():] for word in match.group(2).split("|")]


def test_every_route_served_is_in_the_schema_and_back() -> None:
    served = _served_routes()
    assert served == set(ROUTES), f"served, not in core.wire: {served - set(ROUTES)}; " \
                                  f"in core.wire, not served: {set(ROUTES) - served}"


def _query_keys_read(function: ast.AST) -> set[str]:
    """The keys a handler reads from ``request.query`` itself (get, getall, or an index)."""
    keys = set()
    for node in ast.walk(function):
        target = node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("get", "getall") else node.value if isinstance(node, ast.Subscript) else None
        key = node.args[0] if isinstance(node, ast.Call) and node.args else getattr(node, "slice", None)
        if isinstance(target, ast.Attribute) and target.attr == "query" and isinstance(key, ast.Constant):
            keys.add(str(key.value))
    return keys


def test_every_query_parameter_a_route_reads_is_declared() -> None:
    """What a handler reads from the query string is in its route's ``params`` (and so in the document)."""
    undeclared = []
    for path in SERVER.glob("routes_*.py"):
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, ast.AsyncFunctionDef):
                continue
            for decorator in function.decorator_list:
                if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) \
                        and isinstance(decorator.args[0], ast.Constant) and decorator.func.attr != "route":
                    for route_path in _expanded(str(decorator.args[0].value)):
                        route = ROUTES[(decorator.func.attr.upper(), route_path)]
                        missing = _query_keys_read(function) - {p.name for p in route.params}
                        undeclared += [f"{route.method} {route.path}: ?{key}" for key in sorted(missing)]
    assert not undeclared, undeclared


def test_the_client_calls_only_routes_of_the_schema() -> None:
    source = (REPO / "ai_memory" / "client" / "api.py").read_text()
    paths = {p.split("?")[0] for p in re.findall(r'"(/(?:v1|hook|status|health)[^"]*)"', source)}
    patterns = {p: re.escape(re.sub(r"\{[^}]*\}", "{}", p)).replace(r"\{\}", "[^/]+") for p in paths}
    unknown = [p for p, pattern in patterns.items() if not any(re.fullmatch(pattern, path) for _, path in ROUTES)]
    assert paths and not unknown, unknown


def test_the_enums_are_the_daemons_own() -> None:
    assert set(wire.Kind.__args__) == set(MEMORY_KINDS)
    assert set(wire.SearchKind.__args__) == set(TYPE_OF_KIND)
    assert set(wire.Scope.__args__) == set(SCOPES)
    assert set(wire.Signal.__args__) == set(FEEDBACK_DELTAS)


def _difference(declared: Any, real: Any, where: str = "") -> str | None:
    """Where the validated answer lost or changed something of the real one."""
    if isinstance(real, dict) and isinstance(declared, dict):
        for key in real:
            if key not in declared:
                return f"{where}.{key}: a field the schema does not declare"
            found = _difference(declared[key], real[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(real, list) and isinstance(declared, list):
        for i, (d, r) in enumerate(zip(declared, real)):
            found = _difference(d, r, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if declared == real and type(declared) in (type(real), float) else f"{where}: {real!r} became {declared!r}"


def _route_key(method: str, path: str) -> tuple[str, str]:
    for (m, template) in ROUTES:
        if m == method and re.fullmatch(re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template)), path):
            return m, template
    raise AssertionError(f"{method} {path} is in no route of core.wire")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    running = Daemon(tmp_path_factory.mktemp("wire") / "data").start()
    yield running
    running.stop()


class Caller:
    """Calls the daemon and checks each answer against the schema."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.checked: set[tuple[str, str]] = set()
        self.problems: list[str] = []

    def __call__(self, method: str, path: str, body: Any = None, status: int | None = None) -> Any:
        got, answer, _ = self.daemon.request(method, path, body)
        key = _route_key(method, path.split("?")[0])
        route = ROUTES[key]
        assert got == (status or route.status), (method, path, got, answer)
        self.checked.add(key)
        if route.answer in (None, dict) or got >= 400:
            return answer
        try:
            adapter = wire.adapter(route.answer)
            declared = adapter.dump_python(adapter.validate_python(answer), by_alias=True)
        except ValidationError as exc:
            self.problems.append(f"{method} {path} does not answer {route.answer.__name__}: {exc}")
            return answer
        problem = _difference(declared, answer)
        if problem:
            self.problems.append(f"{method} {path} ({route.answer.__name__}){problem}")
        return answer


def test_each_route_answers_what_the_schema_declares(daemon: Daemon, claude_fixtures: dict) -> None:
    call = Caller(daemon)
    drive_session(daemon, claude_fixtures)
    call("POST", "/hook?agent=claude", {"hook_event_name": "UserPromptSubmit", "session_id": "s2",
                                        "cwd": "/home/dev/acme-api", "prompt": "why is the pool test flaky"})
    call("POST", "/hook/batch?agent=claude", [{"hook_event_name": "UserPromptSubmit", "session_id": "s3",
                                              "cwd": "/home/dev/acme-api", "prompt": "pool size"}])
    call("POST", "/hook/envelope", {"payload": {"hook_event_name": "UserPromptSubmit", "session_id": "s4",
                                                "cwd": "/home/dev/acme-api", "prompt": "x"}, "agent": "claude"})
    first = call("POST", "/v1/pages", {"text": "We pin pygit2 below 2: its ABI broke our wheels.", "kind": "decision",
                                       "project": "acme-api", "title": "Pin pygit2", "tags": ["deps"]})
    second = call("POST", "/v1/pages", {"text": "We pin pygit2 below 3 now.", "kind": "decision",
                                        "project": "acme-api", "title": "Pin pygit2", "supersedes": first["id"]})
    call("GET", "/health")
    call("GET", "/status")
    call("GET", "/v1/openapi.json")
    call("POST", "/v1/query", {"q": "pygit2 pin", "project": "acme-api", "explain": True, "profile": True})
    call("POST", "/v1/query", {"q": "flaky pool", "all": True, "kind": ["decision", "session"], "k": 5})
    call("POST", "/v1/query", {"q": "zzqx-nothing-matches-this", "project": "acme-api"})
    raw = call("POST", "/v1/query", {"q": "flaky", "project": "acme-api"})  # only an event says it
    assert raw["raw_hits"] and not raw["hits"], raw
    past = call("POST", "/v1/query", {"q": "pygit2", "project": "acme-api", "as_of": utc_day(datetime.now(timezone.utc)), "explain": True})
    assert past["hits"] and "valid_from" in past["hits"][0], past
    call("POST", "/v1/recall", {"prompt": "why did we pin pygit2 below 3", "project": "acme-api", "explain": True})
    call("GET", f"/v1/pages?id={second['id']}")
    call("GET", f"/v1/pages/history?id={second['id']}")
    call("GET", f"/v1/pages/at?id={second['id']}&rev=HEAD")
    call("POST", "/v1/pages/restore", {"id": second["id"], "rev": "HEAD"})
    call("POST", "/v1/pages/pin", {"id": second["id"], "pinned": True})
    call("POST", "/v1/feedback", {"id": second["id"], "signal": "helpful"})
    recent = call("GET", "/v1/recent?project=acme-api")
    call("GET", "/v1/meta?project=acme-api")
    call("GET", "/v1/lint")
    call("GET", "/v1/projects")
    call("GET", "/v1/briefing?cwd=/home/dev/acme-api&agent=claude")
    call("POST", "/v1/handoffs", {"summary": "finish the pool fix", "project": "acme-api", "next_steps": ["run it"]})
    call("GET", "/v1/handoffs?project=acme-api")
    call("POST", "/v1/briefing?agent=claude", {"cwd": "/home/dev/acme-api", "session_id": "s9"})
    call("POST", "/v1/handoffs/accept", {"cwd": "/home/dev/acme-api", "session_id": "s10", "project": "acme-api"})
    spare = call("POST", "/v1/handoffs", {"summary": "second thoughts", "project": "acme-api"})
    call("POST", f"/v1/handoffs/{spare['handoff']['id']}/cancel")
    call("POST", "/v1/messages", {"to_project": "web", "body": "the API changed", "from_project": "acme-api"})
    call("GET", "/v1/messages?project=web")
    call("POST", "/v1/messages/pop", {"project": "web"})
    other = call("POST", "/v1/messages", {"to_project": "web", "body": "again"})
    call("POST", f"/v1/messages/{other['message']['id']}/cancel")
    session = recent["sessions"][0]["id"]
    call("GET", f"/v1/sessions/{session}/observations")
    call("POST", f"/v1/sessions/{session}/finalize")
    call("POST", f"/v1/sessions/{session}/move", {"project": "acme-web", "dry_run": True})
    call("POST", "/v1/projects/rename", {"from": "acme-api", "to": "acme-core", "dry_run": True})
    call("POST", "/v1/projects/merge", {"from": "web", "to": "acme-api", "dry_run": True}, status=404)
    call("POST", "/v1/projects/purge", {"project": "acme-api", "confirm": True, "dry_run": True})
    call("POST", "/v1/forget-sweep", {"dry_run": True})
    call("GET", "/v1/tombstones")
    call("GET", "/v1/export")
    call("POST", "/v1/sync", {}, status=400)  # no remote is set: the reason says so
    remote = daemon.data_dir.parent / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    call("POST", "/v1/sync", {"remote": str(remote)})
    call("POST", "/v1/users", {"name": "alice"})
    call("GET", "/v1/users")
    call("POST", "/v1/users/alice/revoke")
    call("GET", "/v1/audit?limit=5")
    login = call("POST", "/v1/ui/login", {})
    call("POST", "/v1/ui/login/state", {"code": login["code"]})
    call("DELETE", f"/v1/pages?id={second['id']}")
    call("POST", "/v1/reindex", {})
    assert not call.problems, "\n".join(call.problems)
    assert call.checked == set(ROUTES), f"not exercised: {set(ROUTES) - call.checked}"


BAD_BODIES = [  # (route, body, the field the 400 must name)
    ("/v1/query", {"q": "x", "k": "5"}, "k"),
    ("/v1/query", {"q": "x", "k": 500}, "k"),
    ("/v1/query", {"q": "x", "all": 1}, "all"),
    ("/v1/query", {"q": "x", "kind": ["decision", "memo"]}, "kind"),
    ("/v1/query", {"k": 3}, "q"),
    ("/v1/pages", {"text": "x", "kind": "fact", "project": "a b"}, "project"),
    ("/v1/pages", {"text": "x", "kind": "fact", "project": "api", "tags": [1]}, "tags.0"),
    ("/v1/pages/pin", {"id": "x", "pinned": "yes"}, "pinned"),
    ("/v1/feedback", {"id": "x", "signal": "meh"}, "signal"),
    ("/v1/handoffs", {"summary": "x", "project": "api", "next_steps": ["a", 3]}, "next_steps.1"),
    ("/v1/handoffs/accept", {"cwd": "/r"}, "session_id"),
    ("/v1/messages", {"to_project": "web", "body": "x", "ttl_s": "60"}, "ttl_s"),
    ("/v1/messages/pop", {"project": "web", "limit": 51}, "limit"),
    ("/v1/recall", {"prompt": 5}, "prompt"),
    ("/v1/projects/rename", {"from": "a"}, "to"),
    ("/v1/forget-sweep", {"dry_run": "no"}, "dry_run"),
    ("/v1/users", {"name": 7}, "name"),
]


@pytest.mark.parametrize(("path", "body", "field"), BAD_BODIES, ids=[f"{p} {f}" for p, _, f in BAD_BODIES])
def test_a_body_that_breaks_the_schema_is_a_400_naming_the_field(daemon: Daemon, path: str, body: Any,
                                                                 field: str) -> None:
    status, answer, _ = daemon.request("POST", path, body)
    assert status == 400, answer
    assert re.search(rf"(^|\s){re.escape(field)}(:|\s|$)", answer["error"]), answer


def test_each_bounded_parameter_is_held_to_its_declared_bounds(daemon: Daemon) -> None:
    """A ``limit`` the schema bounds: its largest is taken, one more and 0 are refused naming it."""
    bounded = [(r, p) for r in wire.ROUTES for p in r.params if p.maximum is not None]
    assert bounded
    for route, param in bounded:
        path = re.sub(r"\{[^}]*\}", "x", route.path)
        for value, status in ((param.maximum, 200), (param.maximum + 1, 400), (0, 400), ("many", 400)):
            got, answer, _ = daemon.request(route.method, f"{path}?{param.name}={value}")
            assert got == status, (route.path, value, got, answer)
            if status == 400:
                assert answer["error"].startswith(param.name), answer


def test_a_body_that_is_not_an_object_is_a_400(daemon: Daemon) -> None:
    for route in wire.ROUTES:
        if route.body is not None and "{" not in route.path:
            status, answer, _ = daemon.request(route.method, route.path, ["not", "an", "object"])
            assert status == 400 and answer["error"] == "body must be a JSON object", (route.path, answer)


def test_the_daemon_serves_the_document_made_from_the_schema(daemon: Daemon) -> None:
    status, served, _ = daemon.request("GET", "/v1/openapi.json", auth=False)
    assert status == 200 and served == json.loads(json.dumps(document(served["info"]["version"])))
    validate(served)  # a valid OpenAPI 3.1 document, by the specification's own schema
    assert served["openapi"].startswith("3.1") and len(served["paths"]) == len({p for _, p in ROUTES})
    query = served["paths"]["/v1/query"]["post"]
    body = served["components"]["schemas"][query["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                                           .rsplit("/", 1)[1]]
    assert body["properties"]["k"]["maximum"] == 100 and "q" in body["required"]
    refs = re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', json.dumps(served))
    assert set(refs) <= set(served["components"]["schemas"]), "a reference to a schema the document lacks"


def test_the_routes_marked_admin_are_the_ones_a_user_token_is_refused(daemon: Daemon) -> None:
    """``Route.admin`` is what the daemon does: 403 for a team user's token there, and only there."""
    token = add_user(daemon.data_dir, "carol", daemon)
    wrong = []
    for route in wire.ROUTES:
        path = re.sub(r"\{[^}]*\}", "x", route.path)
        body = {} if route.method != "GET" else None
        status, answer, _ = call(daemon, token, route.method, path, body)
        refused = status == 403 and isinstance(answer, dict) and answer.get("error") == "admin only"
        if refused != route.admin:
            wrong.append(f"{route.method} {route.path}: {status} {answer}")
    assert not wrong, "\n".join(wrong)


def test_a_route_without_its_token_is_refused_but_the_document_is_open(daemon: Daemon) -> None:
    assert daemon.request("GET", "/v1/meta", auth=False)[0] == 401
    assert daemon.request("GET", "/v1/openapi.json", auth=False)[0] == 200
