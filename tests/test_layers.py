"""The layering in ARCHITECTURE.md is real: no module imports from a layer above its own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ai_memory"

# Mirrors the table in ARCHITECTURE.md. A module may import only from strictly lower layers,
# and from its own package (e.g. ai_memory.store.writer imports ai_memory.store.connection).
LAYERS: dict[str, int] = {
    "core": 0,
    "config": 1, "datadir": 1, "logsetup": 1, "heap": 1, "store": 1, "embed": 1, "client": 1,
    "wiki": 2, "llm": 2,
    "retrieval": 3, "ingest": 3, "coordination": 3, "backup": 3, "overview": 3,
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
    # package data (data_template/, hooks/: links to the top-level folders) is not a unit
    units = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py" or p.is_dir()) and not p.name.startswith("_")} - PACKAGE_DATA
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


SQL_START = ("SELECT ", "INSERT ", "UPDATE ", "DELETE ", "REPLACE ", "CREATE ", "DROP ", "ALTER ", "PRAGMA ", "WITH ")
# Statements that query nothing but are SQL all the same: a transaction, a savepoint, a file attached.
SQL_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT ", "RELEASE ", "ATTACH ", "DETACH ")
QUERIES = {"execute", "executemany", "executescript"}
WRITES = {"submit", "submit_wait"} | QUERIES


def _is_sql(node: ast.AST) -> bool:
    """A string constant (an f-string's literal parts too) that starts a SQL statement."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and \
        node.value.lstrip().startswith(SQL_START + SQL_CONTROL)


def _server_findings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and _is_sql(node):
            found.append(f"line {node.lineno}: SQL {node.value.strip()[:40]!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES:
            found.append(f"line {node.lineno}: .{node.func.attr}() (a writer job or a query)")
        elif isinstance(node, ast.Call) and _is_reader_run(node.func):
            found.append(f"line {node.lineno}: reader.run() (a read of the store: call a use case)")
        elif isinstance(node, ast.ImportFrom) and node.module == "ai_memory.store.writer":
            found.append(f"line {node.lineno}: imports the writer")
    return found


def _is_reader_run(func: ast.expr) -> bool:
    """``<x>.reader.run`` or ``reader.run``: a function handed to a read connection."""
    if not isinstance(func, ast.Attribute) or func.attr != "run":
        return False
    target = func.value
    return (isinstance(target, ast.Attribute) and target.attr == "reader") or \
        (isinstance(target, ast.Name) and target.id == "reader")


def test_no_sql_or_writer_jobs_in_the_server() -> None:
    """Handlers parse, call a use case in coordination/, wiki/, retrieval/, ingest/ or overview/,
    and render: the SQL lives in store/, the reads and writer jobs in the use cases."""
    violations = [f"{path.relative_to(PACKAGE)} {finding}" for path in sorted((PACKAGE / "server").rglob("*.py"))
                  for finding in _server_findings(path)]
    assert not violations, "\n".join(violations)


def test_the_server_check_sees_sql_and_writer_jobs(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('from ai_memory.store.writer import Writer\n'
                   'async def h(rt, reader):\n    await rt.writer.submit(lambda tx: tx.conn.execute("SELECT 1"))\n'
                   '    await rt.reader.run(count_pages)\n    await reader.run(count_pages)\n')
    assert len(_server_findings(bad)) == 6


# The client's own SQLite files (``<data_dir>/client/outbox.sqlite``, ``cache.sqlite``), not the
# daemon's database: they live on the machine running the CLI or the MCP server, and client/
# sits beside store/ on layer 1, standard library only for the hook path, so it cannot call store/.
SQL_OUTSIDE_THE_STORE = {"client/outbox.py", "client/local_index.py", "client/state_files.py"}


def _sql_findings(path: Path) -> list[str]:
    """Every SQL statement written, and every query run, in a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Constant) and _is_sql(node):
            found.append(f"line {node.lineno}: SQL {node.value.strip()[:40]!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in QUERIES:
            found.append(f"line {node.lineno}: .{node.func.attr}() (a query: name it in store/)")
    return found


def test_sql_lives_only_in_the_store() -> None:
    """Every statement on the daemon's database is a named function in ``store/``: the schema and
    its queries change in one place, and no layer above can read or write a table its own way."""
    outside = [path for path in sorted(PACKAGE.rglob("*.py")) if path.relative_to(PACKAGE).parts[0] != "store"]
    violations = [f"{path.relative_to(PACKAGE)} {finding}" for path in outside
                  if path.relative_to(PACKAGE).as_posix() not in SQL_OUTSIDE_THE_STORE
                  for finding in _sql_findings(path)]
    assert not violations, "\n".join(violations)
    # the allowance stays narrow: a file that no longer needs it leaves the list
    assert all(_sql_findings(PACKAGE / rel) for rel in SQL_OUTSIDE_THE_STORE)


def test_the_store_check_sees_sql_and_queries(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('ROWS = "SELECT path FROM pages"\n'
                   'def f(conn, table):\n    conn.execute(f"DELETE FROM {table}")\n'
                   '    conn.execute("BEGIN IMMEDIATE")\n    conn.executemany(ROWS, [])\n')
    assert len(_sql_findings(bad)) == 6
    good = tmp_path / "good.py"
    good.write_text('from ai_memory.store.pages import page_count\n'
                    'def f(conn):\n    return page_count(conn), "Selected pages", "-----BEGIN KEY-----"\n')
    assert _sql_findings(good) == []


# A stored moment spelled or parsed by hand: the format's own pattern, or ISO text with its "Z"
# swapped for an offset so that datetime can read it.
_HAND_CLOCK = re.compile(r"""%Y-%m-%dT%H:%M:%S|replace\(\s*["']Z["']\s*,\s*["']\+00:00["']\s*\)|\}T\d\d:\d\d""")  # the last: a day made a moment by hand


def test_every_stored_moment_is_spelled_and_parsed_by_the_one_clock() -> None:
    """``core.clock`` is the only place that knows how a moment is written and read back:
    stamps are compared as strings, so a second spelling sorts wrongly against the first."""
    clock = PACKAGE / "core" / "clock.py"
    found = [f"{path.relative_to(PACKAGE)}:{n}" for path in sorted(PACKAGE.rglob("*.py")) if path != clock
             for n, line in enumerate(path.read_text().splitlines(), 1) if _HAND_CLOCK.search(line)]
    assert found == [], found
    assert _HAND_CLOCK.search('moment.strftime("%Y-%m-%dT%H:%M:%SZ")')
    assert _HAND_CLOCK.search('datetime.fromisoformat(due.replace("Z", "+00:00"))')
    assert _HAND_CLOCK.search('f"{day}T23:59:59.999999Z"')


# Who may see a page, written by hand: a scope compared with 'private' in SQL or in Python.
_HAND_PRIVACY = re.compile(r"""scope["'\]]*\s*(?:!=|==|<>|=|IS)\s*["']private["']""", re.IGNORECASE)
# core.users owns the rule; core.memory decides whom a correction hides a page from, which is
# about two pages' scopes, not about a reader.
_PRIVACY_OWNERS = ("core/users.py", "core/memory.py")


def test_every_page_visibility_check_is_the_one_predicate() -> None:
    """``core.users.visible_to`` (Python) and ``visible_sql`` (SQL) are the one rule; a check
    written again disagreed on pages without an owner (``owner IS ?`` against ``COALESCE``)."""
    found = [f"{path.relative_to(PACKAGE)}:{n}" for path in sorted(PACKAGE.rglob("*.py"))
             if path.relative_to(PACKAGE).as_posix() not in _PRIVACY_OWNERS
             for n, line in enumerate(path.read_text().splitlines(), 1) if _HAND_PRIVACY.search(line)]
    assert found == [], found
    for written in ("AND (p.scope != 'private' OR p.owner IS ?)", 'if found["scope"] == "private" and x',
                    "WHERE scope = 'private'"):
        assert _HAND_PRIVACY.search(written), written
