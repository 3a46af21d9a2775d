"""Game protection's mathematics is plain Python: importing every module of it loads no Django."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_game_protection_loads_no_django():
    modules = sorted(p.stem for p in (ROOT / "rounds" / "protection").glob("*.py") if p.stem != "__init__")
    code = (
        "import sys\n"
        + "".join(f"import rounds.protection.{m}\n" for m in modules)
        + "print(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert len(modules) >= 8
