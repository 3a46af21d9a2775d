"""Game protection's error budget from the environment: a chance between 0 and 1, or the start stops
and names it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "import django; django.setup(); from django.conf import settings; print(settings.PROTECTION_LEAK_ALPHA)"


def _start(alpha: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "casino.settings", "PROTECTION_LEAK_ALPHA": alpha,
           "DATABASE_URL": "sqlite:///:memory:"}
    return subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_a_chance_is_taken():
    done = _start("0.0005")
    assert done.returncode == 0 and done.stdout.strip().endswith("0.0005")


@pytest.mark.parametrize("alpha", ["0", "1", "-0.1", "one in a thousand", "nan"])
def test_anything_else_stops_the_start_naming_the_setting(alpha):
    done = _start(alpha)
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr and "PROTECTION_LEAK_ALPHA" in done.stderr
