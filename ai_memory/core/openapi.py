"""The OpenAPI 3.1 document of the HTTP API, made from ``core.wire.ROUTES`` and nothing else:
the daemon serves it at ``/v1/openapi.json`` and the docs print the API reference from it."""

from __future__ import annotations

import json
from typing import Any, Literal

from ai_memory.core.wire import ROUTES, Failure, Param, Route, adapter

REF = "#/components/schemas/{model}"
ERRORS = {"400": "the body or a parameter is wrong (the reason names the field)",
          "401": "missing or wrong token", "403": "not this token's to do (or a foreign Origin or Host)",
          "404": "nothing by that name", "409": "it conflicts with the current state",
          "413": "the body is too large", "415": "the body is not JSON",
          "429": "too many requests, or the daily quota is spent (Retry-After says when)",
          "502": "the git remote failed a sync", "503": "storage is failing or full; nothing was stored"}
WITH_A_TOKEN = ("401", "403", "429")
WITH_A_BODY = ("413", "415")


class EncodedDocument:
    """The document as the daemon serves it: made on its first request (its schemas cost memory a
    daemon that is never asked need not hold), then kept as bytes, since the route is open."""

    def __init__(self, version: str) -> None:
        self.version = version
        self._encoded: bytes | None = None

    def encoded(self) -> bytes:
        if self._encoded is None:
            self._encoded = json.dumps(document(self.version)).encode()
        return self._encoded


def document(version: str) -> dict[str, Any]:
    """The whole document; its schemas are pydantic's JSON Schema of the wire types."""
    schemas: dict[str, Any] = {"Failure": _schema(Failure, "serialization", {})}
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route, schemas)
    return {
        "openapi": "3.1.0",
        "info": {"title": "ai-memory", "version": version, "description": (
            "The local memory daemon's HTTP API. Every call but /health and this document carries "
            "`Authorization: Bearer <token>` (the data dir's token, or a team user's). Errors are JSON "
            "`{error, detail}`.")},
        "servers": [{"url": "http://127.0.0.1:49374"}],
        "security": [{"bearer": []}],
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}, "schemas": schemas},
        "paths": paths,
    }


def _operation(route: Route, schemas: dict[str, Any]) -> dict[str, Any]:
    answer = {"description": "done", "content": _json(_named(route.answer, "serialization", schemas))}
    operation: dict[str, Any] = {
        "operationId": _operation_id(route), "summary": route.summary, "tags": [route.tag],
        "responses": {str(status): answer for status in (route.status, *route.also)},
    }
    for status in _errors(route):
        operation["responses"][status] = {"description": ERRORS[status],
                                          "content": _json({"$ref": REF.format(model="Failure")})}
    if route.public:
        operation["security"] = []
    if route.admin:
        operation["description"] = "Needs the data dir's own token (admin), not a team user's."
    if route.params:
        operation["parameters"] = [_parameter(p) for p in route.params]
    if route.body is not None:  # a body whose fields are all optional may be left out
        needed = bool(getattr(route.body, "__required_keys__", ()))
        operation["requestBody"] = {"required": needed, "content": _json(_named(route.body, "validation", schemas))}
    elif route.raw_body is not None:
        operation["requestBody"] = {"required": True, "content": _json({"description": route.raw_body})}
    return operation


def _errors(route: Route) -> list[str]:
    """The failures a route can answer with: those of a token and a body only where it takes them."""
    skipped = set(WITH_A_TOKEN if route.public else ()) | set(() if route.body or route.raw_body else WITH_A_BODY)
    if route.path != "/v1/sync":
        skipped.add("502")
    return [status for status in ERRORS if status not in skipped]


def _operation_id(route: Route) -> str:
    words = [w for w in route.path.replace("{", "").replace("}", "").split("/") if w and w != "v1"]
    return "_".join([route.method.lower(), *(w.replace("-", "_").replace(".", "_") for w in words)])


def _parameter(param: Param) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": param.type}
    if param.maximum is not None:
        schema.update(minimum=1, maximum=param.maximum)
    if param.default is not None:
        schema["default"] = param.default
    return {"name": param.name, "in": param.where, "required": param.where == "path",
            "description": param.description, "schema": schema}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _named(kind: type | None, mode: Literal["validation", "serialization"], schemas: dict[str, Any]) -> dict[str, Any]:
    """A reference to ``kind``'s schema, added to ``schemas`` with the types it uses."""
    if kind is None or kind is dict:
        return {"type": "object"}
    if kind.__name__ not in schemas:
        schemas[kind.__name__] = _schema(kind, mode, schemas)
    return {"$ref": REF.format(model=kind.__name__)}


def _schema(kind: type, mode: Literal["validation", "serialization"], schemas: dict[str, Any]) -> dict[str, Any]:
    schema = adapter(kind).json_schema(mode=mode, ref_template=REF)
    for name, nested in schema.pop("$defs", {}).items():
        schemas.setdefault(name, nested)
    return schema
