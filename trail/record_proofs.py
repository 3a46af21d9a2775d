"""The records held to the audit trail: one list, run whole by ``verify_audit`` and by the nightly report.

Each app whose rows the trail vouches for (versions, findings' work, people,
tokens, table keys, counts, held rounds, people's acts) registers its proof
as it becomes ready: the nightly report stands below the shell, where people
live, so the list is filled from above rather than imported. A proof yields
one difference per record that is not what the trail says, each naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RecordProof:
    name: str  # its key in the nightly report's figures
    differences: Callable[[], Iterable[object]]  # each one's str() names the record and what differs
    differs: str  # verify_audit's damage line: what differs
    holds: str  # verify_audit's line when nothing does


PROOFS: dict[str, RecordProof] = {}


def record_proof_register(proof: RecordProof) -> None:
    PROOFS[proof.name] = proof


def record_proofs() -> tuple[RecordProof, ...]:
    return tuple(PROOFS.values())
