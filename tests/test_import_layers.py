"""The apps import one way: engine and infrastructure at the bottom, the audit log above them,
rounds and progressive above that, reconciliation on top.

Read from the source (no import is run), so a new import that goes the wrong
way fails here before anyone has to untangle it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("infra", "trail", "casino", "rounds", "progressive", "audit")

# Plain Python, no Django: the engine, game protection's mathematics, and the report's
# arithmetic and statistics.
PURE = (
    "rounds.engine", "rounds.protection", "audit.statistics", "audit.reconciliation.figures",
    "audit.reconciliation.variance_tests", "audit.seat_covariance", "audit.trips_joint",
)
# Shared infrastructure every app stands on.
INFRASTRUCTURE = ("infra",)
# The audit trail: the log, its walk, the database's guards of the records, dual control.
AUDIT_LOG = ("trail",)
RECONCILIATION = ("audit.reconciliation",)

# progressive's core: what rounds stands on (a round is judged by a pool version,
# its events are a pool's ledger), so it imports nothing of rounds but the engine.
# Its API and admin, the outer shell, share the tables' key authentication, the
# wire's amount fields and the admin's read-only pages with the other apps'.
PROGRESSIVE_CORE = (
    "progressive.models", "progressive.services", "progressive.selectors", "progressive.ledger",
    "progressive.reversal", "progressive.configuration",
)


def _within(module: str, packages) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _imports() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for app in PROJECT:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
            module = ".".join(parts if parts[-1] != "__init__" else parts[:-1])
            targets = edges.setdefault(module, set())
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom):
                    base = package[: len(package) - node.level + 1] if node.level else []
                    target = ".".join([*base, *([node.module] if node.module else [])])
                    names = [f"{target}.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                else:
                    continue
                targets.update(n for n in names if n.split(".")[0] in PROJECT)
    return edges


EDGES = _imports()


def _wrong(source_packages, allowed) -> list[str]:
    wrong = []
    for source, targets in EDGES.items():
        if not _within(source, source_packages):
            continue
        for target in targets:
            if not _within(target, allowed):
                wrong.append(f"{source} -> {target}")
    return sorted(wrong)


def test_the_pure_core_imports_nothing_of_the_project_but_itself():
    assert _wrong(["rounds.engine"], ["rounds.engine"]) == []
    assert _wrong(["rounds.protection"], ["rounds.protection", "rounds.engine"]) == []
    assert _wrong(PURE, PURE) == []


def test_infrastructure_imports_no_app():
    assert _wrong(INFRASTRUCTURE, [*INFRASTRUCTURE, *PURE]) == []


def test_the_audit_log_stands_below_the_apps_that_write_it():
    assert _wrong(AUDIT_LOG, [*AUDIT_LOG, *INFRASTRUCTURE, *PURE]) == []


def test_rounds_and_progressive_never_import_reconciliation():
    below_reconciliation = [p for p in PROJECT if p != "audit"] + list(AUDIT_LOG) + list(PURE) + [
        "audit.selectors", "audit.exports", "audit.shifts", "audit.statistics", "audit.api", "audit.admin",
        "infra.charts",
    ]
    assert _wrong(["rounds", "progressive"], below_reconciliation) == []


def test_progressive_stands_below_rounds():
    assert _wrong(PROGRESSIVE_CORE, ["progressive", *INFRASTRUCTURE, *AUDIT_LOG, "rounds.engine"]) == []
