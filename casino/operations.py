"""Each operation of the API by its name and its reader: what docs/openapi.yaml calls it
(``operationId``) and under which tag it is listed.

A table's engineer reads the ``table`` tag first: the operations a table calls
with its key. Everything else is for casino staff, listed by what it is about.
An operation is named here once, by its method and path as the schema writes
them; one not named keeps drf-spectacular's own id, and the schema's tests
refuse it (tests/api/test_docs_examples.py).
"""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema

# "METHOD path" → (tag, operationId); the tags, their order and descriptions are
# SPECTACULAR_SETTINGS["TAGS"] (casino/settings.py).
OPERATIONS = {
    "POST /api/v1/rounds/": ("table", "postRound"),
    "GET /api/v1/tokens/": ("tokens", "listTokens"),
    "POST /api/v1/tokens/": ("tokens", "makeToken"),
    "DELETE /api/v1/tokens/{key}/": ("tokens", "revokeToken"),
    "POST /api/v1/rounds/batch": ("table", "postRoundBatch"),
    "POST /api/v1/meter-readings/": ("table", "postMeterReading"),
    "GET /api/v1/rounds/": ("rounds", "listRounds"),
    "GET /api/v1/rounds/{id}/": ("rounds", "getRound"),
    "POST /api/v1/rounds/{id}/void": ("rounds", "voidRound"),
    "POST /api/v1/rounds/{id}/place": ("rounds", "placeRound"),
    "GET /api/v1/findings/": ("findings", "listFindings"),
    "POST /api/v1/findings/transition": ("findings", "transitionFindings"),
    "GET /api/v1/findings/{id}/case": ("findings", "getFindingCase"),
    "PATCH /api/v1/findings/{id}/case": ("findings", "changeFindingCase"),
    "GET /api/v1/findings/{id}/case/comments": ("findings", "listFindingCaseComments"),
    "POST /api/v1/findings/{id}/case/comments": ("findings", "commentFindingCase"),
    "POST /api/v1/findings/{id}/case/escalation": ("findings", "escalateFindingCase"),
    "GET /api/v1/pools/": ("progressive", "listPools"),
    "GET /api/v1/pools/{code}/": ("progressive", "getPool"),
    "GET /api/v1/pools/{code}/ledger-check": ("progressive", "checkPoolLedger"),
    "POST /api/v1/pools/{code}/adjustments": ("progressive", "adjustMeter"),
    "POST /api/v1/pools/{code}/overflow-transfers": ("progressive", "transferOverflow"),
    "POST /api/v1/pools/{code}/versions": ("progressive", "createPoolVersion"),
    "GET /api/v1/pool-versions/": ("progressive", "listPoolVersions"),
    "GET /api/v1/meter-events/": ("progressive", "listMeterEvents"),
    "GET /api/v1/hits/": ("progressive", "listHits"),
    "GET /api/v1/meter-readings/": ("progressive", "listMeterReadings"),
    "GET /api/v1/adjustment-requests/": ("progressive", "listAdjustmentRequests"),
    "GET /api/v1/adjustment-requests/{id}": ("progressive", "getAdjustmentRequest"),
    "POST /api/v1/adjustment-requests/{id}/approve": ("progressive", "approveAdjustmentRequest"),
    "POST /api/v1/adjustment-requests/{id}/reject": ("progressive", "rejectAdjustmentRequest"),
    "GET /api/v1/pool-version-requests/": ("progressive", "listPoolVersionRequests"),
    "GET /api/v1/pool-version-requests/{id}": ("progressive", "getPoolVersionRequest"),
    "POST /api/v1/pool-version-requests/{id}/approve": ("progressive", "approvePoolVersionRequest"),
    "POST /api/v1/pool-version-requests/{id}/reject": ("progressive", "rejectPoolVersionRequest"),
    "GET /api/v1/reports/": ("reports", "listReports"),
    "GET /api/v1/reports/{id}/": ("reports", "getReport"),
    "GET /api/v1/reports/{id}.csv": ("reports", "getReportCsv"),
    "GET /api/v1/counts/": ("reports", "listCounts"),
    "POST /api/v1/counts/": ("reports", "postCount"),
    "GET /api/v1/protection/findings/": ("protection", "listProtectionFindings"),
    "GET /api/v1/protection/findings/{id}/": ("protection", "getProtectionFinding"),
    "GET /api/v1/protection/findings/{id}/case": ("protection", "getProtectionFindingCase"),
    "PATCH /api/v1/protection/findings/{id}/case": ("protection", "changeProtectionFindingCase"),
    "GET /api/v1/protection/findings/{id}/case/comments": ("protection", "listProtectionFindingCaseComments"),
    "POST /api/v1/protection/findings/{id}/case/comments": ("protection", "commentProtectionFindingCase"),
    "POST /api/v1/protection/findings/{id}/case/escalation": ("protection", "escalateProtectionFindingCase"),
    "GET /api/v1/protection/scores/": ("protection", "listSeatScores"),
    "GET /api/v1/players/{player}/": ("protection", "getPlayer"),
    "GET /api/v1/players/{player}/leak-test/": ("protection", "getPlayerLeakTest"),
    "GET /api/v1/exports/{what}.csv": ("exports", "exportCsv"),
}


class NamedOperations(AutoSchema):
    """drf-spectacular's schema, each operation named and tagged from ``OPERATIONS``.

    An ``extend_schema(tags=..., operation_id=...)`` on a view still wins, as it does
    over drf-spectacular's own.
    """

    def _named(self) -> tuple[str, str] | None:
        return OPERATIONS.get(f"{self.method.upper()} {self.path}")

    def get_tags(self) -> list[str]:
        named = self._named()
        return [named[0]] if named else super().get_tags()

    def get_operation_id(self) -> str:
        named = self._named()
        return named[1] if named else super().get_operation_id()
