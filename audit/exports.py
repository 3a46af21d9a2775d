"""The auditors' CSV exports (game protection's findings, the reports' headlines), and every
export the service offers, by name (the API's and the admin's)."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import QuerySet

from infra.exports import Column, Export, json_text, moment, plain, rows_of
from rounds.exports import FINDINGS, ROUNDS
from trail.exports import AUDIT_LOG

from .models import ProtectionFinding, ReconciliationReport

# A game-protection finding; its evidence is the JSON its page renders (figures are the test's own).
PROTECTION_COLUMNS: list[Column] = [
    Column("id", "id"), Column("created_at", "created_at", moment),
    *plain("code", "player", "dealer", "companion", "table", "currency", "day_from", "day_to", "figure",
            "threshold", "detail", "state"),
    Column("state_changed_at", "state_changed_at", moment), Column("state_changed_by", "state_changed_by_name"),
    Column("state_note", "state_note"), Column("evidence", "evidence", json_text),
]

# A report's headline: its figures are the report's own CSV (/api/v1/reports/<id>.csv).
REPORT_COLUMNS: list[Column] = [
    *plain("id", "day_from", "day_to", "version", "status", "rounds", "flags", "drift", "chain_ok",
            "requested_by"),
    Column("created_at", "created_at", moment), Column("finished_at", "finished_at", moment),
]


def protection_rows_of(findings: QuerySet[ProtectionFinding]) -> Iterator[list]:
    return rows_of(PROTECTION_COLUMNS, findings)


def report_rows_of(reports: QuerySet[ReconciliationReport]) -> Iterator[list]:
    return rows_of(REPORT_COLUMNS, reports)


REPORTS = Export("reports", ReconciliationReport, "audit.view_reconciliationreport", report_rows_of)
PROTECTION_FINDINGS = Export(
    "protection-findings", ProtectionFinding, "audit.view_protectionfinding", protection_rows_of)

EXPORTS = {export.name: export for export in (ROUNDS, FINDINGS, AUDIT_LOG, REPORTS, PROTECTION_FINDINGS)}
