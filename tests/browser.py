"""Headless Chromium from the system's packages (scripts/test installs it), driven by
Playwright's Python API without Playwright's own browser download."""

from __future__ import annotations

import shutil

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# No sandbox (tests run as root), and nothing the browser would fetch for itself.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium(playwright):
    """The system's Chromium, launched headless by ``playwright`` (``sync_playwright()``'s)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
