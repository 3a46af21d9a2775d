"""No secret in the repository: every file git would commit, searched for key-like strings.

Searched: what ``git ls-files`` lists, tracked or new (ignored files such as
the virtualenv and var/ are never committed). A table key, a private key, a
cloud access key, a Django secret or a password written out all fail; the
development key and passwords made up for tests are let through by name.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PATTERNS = {
    "table key": re.compile(r"\bta_[0-9a-f]{12}_[A-Za-z0-9_-]{30,}"),
    "private key": re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----"),
    "AWS access key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "Django secret": re.compile(r"\bdjango-insecure-[^\s'\"]{20,}"),
    "secret written out": re.compile(
        r"""(?i)\b(?:secret_key|api_key|apikey|access_token|auth_token|password|passwd)\b\s*[:=]\s*['"]([^'"\s]{12,})['"]"""
    ),
    "credentials in a URL": re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@'\"]+:([^@/\s'\"]{6,})@"),
}
# Values that are made up on purpose: the development key and test passwords.
ALLOWED = re.compile(r"insecure-development-key|test|example|fuzz|dummy|placeholder|changeme|\.\.\.|…", re.IGNORECASE)
SECRET_FILES = re.compile(r"(^|/)(\.env(\..+)?|id_rsa|id_ed25519|.*\.pem|.*\.key|.*\.p12|.*\.pfx)$")


def committable() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")
    return [ROOT / name for name in listed if name and (ROOT / name).is_file()]


def findings(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []  # binary: no key is written in it by hand
    found = []
    for what, pattern in PATTERNS.items():
        for match in pattern.finditer(text):
            value = match.group(match.lastindex or 0)
            if not ALLOWED.search(value) and not ALLOWED.search(match.group(0)):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    return found


def test_no_file_git_would_commit_holds_a_secret():
    files = [f for f in committable() if f != Path(__file__)]  # this file plants samples
    assert len(files) > 50, "git listed almost nothing: is this the repository?"
    assert [str(f.relative_to(ROOT)) for f in files if SECRET_FILES.search(str(f.relative_to(ROOT)))] == []
    assert [finding for path in files for finding in findings(path)] == []


def test_the_search_finds_what_it_looks_for(tmp_path):
    planted = {
        "table key": "KEY = 'ta_0123456789ab_Zx8s7Q2mB4vN1cR6tY9uI3oP5aS0dF7gH'",
        "private key": "-----BEGIN OPENSSH PRIVATE KEY-----",
        "AWS access key": "aws = 'AKIAABCDEFGHIJKLMNOP'",
        "secret written out": 'SECRET_KEY = "k9#2mv!x7qpz4r8w1t6y"',
        "credentials in a URL": "DATABASE_URL=postgres://audit:s3cr3t-pw@db.internal:5432/audit",
    }
    for what, line in planted.items():
        path = ROOT / "tests" / "security" / f"planted_{tmp_path.name}.txt"
        path.write_text(line + "\n")
        try:
            assert findings(path) and what in findings(path)[0], what
        finally:
            path.unlink()
    allowed = ROOT / "tests" / "security" / f"allowed_{tmp_path.name}.txt"
    allowed.write_text('PASSWORD = "a-long-test-password"\nSECRET_KEY = "insecure-development-key-never"\n')
    try:
        assert findings(allowed) == []
    finally:
        allowed.unlink()
