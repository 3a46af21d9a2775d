"""A pool found off its ledger while rounds were stored: named, and each of its rounds told.

A pool's row is moved only with its ledger, and the database refuses
anything else; an owner who passes the triggers can still move it. The
writer then drafts events that do not follow the ledger, the database
refuses them, and the rounds would be refused for ever with them. Instead
``ingest`` stores them again at the ledger's figures
(``progressive.ledger.pools_to_their_ledger``): the pool's row is put back
by the same write, the chain records what the row said and what the ledger
says, the log raises the alert, and each round of the pool stored then
carries a finding that says so.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from game.findings import POOL_OFF_LEDGER
from game.verdict import status_after_service_finding
from infra.rows import new_row
from progressive.ledger import PoolOffLedger
from rounds.models import Finding
from trail.services import SYSTEM, AuditEntry

from .steps import NewRound

logger = logging.getLogger("rounds.services.ingest")


def pools_off_ledger_named(off: Sequence[PoolOffLedger], new: Sequence[NewRound]) -> list[AuditEntry]:
    """A finding on each new round of a pool in ``off``; the chain's events naming each pool."""
    said = []
    for found in off:
        logger.error("ALERT: %s; its rounds are judged at the ledger and the row put back", found)
        for item in new:
            if item.version is not None and item.version.pool_id == found.pool.pk:
                item.findings.append(new_row(Finding, round=item.round, code=POOL_OFF_LEDGER, detail=str(found)))
                item.round.status = status_after_service_finding(item.round.status)
                item.codes = sorted({*item.codes, POOL_OFF_LEDGER})
        said.append(AuditEntry(
            actor=SYSTEM, action="pool.off_ledger", obj=found.pool,
            before=dict(zip(("meter", "overflow", "reserve", "last_event_seq"), map(str, found.held))),
            after=dict(zip(("meter", "overflow", "reserve", "last_event_seq"), map(str, found.ledger))),
        ))
    return said
