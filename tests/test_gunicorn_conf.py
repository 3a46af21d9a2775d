"""gunicorn.conf.py: what the master does before it forks its web workers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_master_fills_the_rank_table_before_forking():
    # A fresh interpreter, as the master is: the table starts empty.
    script = (
        "import runpy; from game import evaluator\n"
        "conf = runpy.run_path('gunicorn.conf.py')\n"
        "before = len(evaluator._BY_RANK_KEY)\n"
        "conf['on_starting'](None)\n"
        "print(before, len(evaluator._BY_RANK_KEY), evaluator.fill_rank_table())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    before, after, full = map(int, done.stdout.split())
    assert before < 1000 and after == full > 49_205  # every 7-card rank multiset, and the 5-card ones
