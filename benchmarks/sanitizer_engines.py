"""The engines ``benchmarks/sanitizer.py`` measures today's rules against, beside the frozen copy
of commit efd2560 (``benchmarks/frozen``):

- ``at_commit(commit)``: the sanitizer of any commit, read from git at run time (no copy in the
  tree): its modules written to a temporary package, their imports pointed at it;
- ``DetectSecrets``: Yelp's detect-secrets (PyPI) as the engine, through its public ad-hoc scan
  (``detect_secrets.core.scan.scan_line``, what ``detect-secrets scan --string`` runs) with its
  default plugins and filters; every value it reports is replaced where it stands, then the text is
  capped as ours is. It is not a dependency: pass ``--detect-secrets DIR`` (a ``pip install
  --target DIR detect-secrets``), or have it importable.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType, SimpleNamespace

MODULES = ("sanitizer", "redaction", "json_walk", "secret_patterns", "secret_formats", "secret_context",
           "secret_shapes", "secret_views", "secret_phrases")


def at_commit(repo: Path, commit: str) -> tuple[ModuleType, ModuleType]:
    """(sanitizer, secret_patterns) as they were at ``commit``."""
    package = f"sanitizer_{commit}"
    root = Path(tempfile.mkdtemp(prefix="ai-memory-bench-")) / package
    root.mkdir()
    (root / "__init__.py").write_text("")
    for name in MODULES:
        shown = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:ai_memory/core/{name}.py"],
                               capture_output=True, text=True)
        if shown.returncode == 0:  # a module that did not exist yet is not imported either
            (root / f"{name}.py").write_text(shown.stdout.replace("ai_memory.core.", f"{package}."))
    sys.path.insert(0, str(root.parent))
    return importlib.import_module(f"{package}.sanitizer"), importlib.import_module(f"{package}.secret_patterns")


class DetectSecrets:
    """detect-secrets behind the sanitizer's interface (``sanitize``, ``sanitize_json``, ``scan``)."""

    def __init__(self, path: str | None, ours: ModuleType) -> None:
        if path:
            sys.path.append(path)
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings

        self._scan_line = scan_line
        self._settings = default_settings()
        self._settings.__enter__()  # the plugins and filters stay configured for the whole run
        self._ours = ours
        self.TextKind = ours.TextKind

    def scan(self, text: str) -> list[tuple[int, int, str, int]]:
        spans, offset = [], 0
        for line in text.splitlines(keepends=True):
            for secret in self._scan_line(line):
                value = secret.secret_value or ""
                at = line.find(value) if value else -1
                while at >= 0:
                    spans.append((offset + at, offset + at + len(value), secret.type, 0))
                    at = line.find(value, at + len(value))
            offset += len(line)
        return spans

    def _redact(self, text: str) -> tuple[str, list[str]]:
        parts, kinds, pos = [], [], 0
        for start, end, kind, _ in sorted(self.scan(text)):
            if start < pos:
                continue
            parts += (text[pos:start], f"[REDACTED:{kind}]")
            kinds.append(kind)
            pos = end
        return "".join(parts) + text[pos:], kinds

    def sanitize(self, text: str, kind: object = None) -> SimpleNamespace:
        out, kinds = self._redact(text)
        limit = (kind or self.TextKind.BODY).limit  # type: ignore[attr-defined]
        return SimpleNamespace(text=self._ours.cap(out, limit)[0], redactions=tuple(kinds))

    def sanitize_json(self, value: object) -> SimpleNamespace:
        def walk(item: object) -> object:
            if isinstance(item, str):
                return self.sanitize(item, self.TextKind.TOOL_IO).text
            if isinstance(item, dict):
                return {walk(k): walk(v) for k, v in item.items()}
            if isinstance(item, list):
                return [walk(v) for v in item]
            return item
        return SimpleNamespace(value=walk(value))
