"""The game's mathematics and the books' arithmetic are plain Python: importing every module of
game/ (the engine, the strategy, game protection's values) or books/ (the report's figures, bands,
variance tests and statistics) loads no Django."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(("folder", "known"), [("game", {"game.protection.values", "game.verdict"}),
                                               ("books", {"books.figures", "books.report_figures"})])
def test_importing_the_pure_folders_loads_no_django(folder, known):
    modules = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / folder).rglob("*.py")
                     if p.stem != "__init__")
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + "print(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert len(modules) >= 8 and known <= set(modules)
