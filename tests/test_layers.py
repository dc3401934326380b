"""The layering in ARCHITECTURE.md is real: no module imports from a layer above its own."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ai_memory"

# Mirrors the table in ARCHITECTURE.md. A module may import only from strictly lower layers,
# and from its own package (e.g. ai_memory.store.writer imports ai_memory.store.connection).
LAYERS: dict[str, int] = {
    "core": 0,
    "config": 1, "datadir": 1, "logsetup": 1, "store": 1, "embed": 1, "client": 1,
    "wiki": 2, "llm": 2,
    "retrieval": 3, "ingest": 3, "coordination": 3, "backup": 3,
    "runtime": 4,
    "server": 5, "mcp": 5,
    "cli": 6,
}
# Package data (top-level folders installed inside the package, no code): any layer may locate them.
PACKAGE_DATA = {"hooks", "data_template"}


def _unit(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "ai_memory" or len(parts) < 2:
        return None
    return parts[1]


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def test_every_unit_has_a_layer() -> None:
    # a folder without Python modules is package data (data_template/, hooks/), not a unit
    units = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and any(p.glob("*.py")))) and not p.name.startswith("_")}
    assert units <= set(LAYERS), f"add {sorted(units - set(LAYERS))} to LAYERS and ARCHITECTURE.md"


def test_imports_point_down() -> None:
    violations = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        own = rel.parts[0].removesuffix(".py")
        if own not in LAYERS:
            continue
        for module in _imports(path):
            target = _unit(module)
            if target is None or target == own or target in PACKAGE_DATA:
                continue
            if target not in LAYERS or LAYERS[target] >= LAYERS[own]:
                violations.append(f"{rel} imports {module}")
    assert not violations, "\n".join(violations)


def test_core_does_no_io() -> None:
    forbidden = {"sqlite3", "aiohttp", "pygit2", "socket", "subprocess", "os", "pathlib", "shutil"}
    for path in (PACKAGE / "core").rglob("*.py"):
        bad = [m for m in _imports(path) if m.split(".")[0] in forbidden]
        assert not bad, f"{path.name} imports {bad}"
