"""Reads of the audit log, and the walk that proves the chain unbroken."""

from __future__ import annotations

from dataclasses import dataclass

from .chain import GENESIS, HASHED_FIELDS, event_hash
from .models import AuditEvent, ChainHead


@dataclass(frozen=True, slots=True)
class ChainVerification:
    ok: bool
    checked: int
    last_seq: int
    last_hash: str
    break_seq: int | None = None
    problem: str = ""


def audit_chain_verify(*, batch_size: int = 5000, anchor: tuple[int, str] | None = None) -> ChainVerification:
    """Walk every event in order; report the first one that does not follow from the last.

    An edited event no longer matches its hash; a deleted one leaves a gap in
    ``seq`` and a ``prev_hash`` that points at nothing; a reordered one points
    at the wrong predecessor. Memory stays flat: events stream in batches.

    A chain rehashed from an edited event follows from itself again; what
    catches it is an ``anchor``, an event's (seq, hash) kept outside the
    database when it was written: that event must still be in the chain with
    that hash.
    """
    # The head is read first: events written while the walk runs lie beyond it
    # and are left for the next walk, so a busy service never looks broken.
    head = ChainHead.objects.filter(pk=1).first()
    events = AuditEvent.objects.order_by("seq")
    if head is not None:
        events = events.filter(seq__lte=head.seq)
    expected_seq, prev_hash, checked = 1, GENESIS, 0
    for row in events.values_list(*HASHED_FIELDS, "hash").iterator(chunk_size=batch_size):
        fields = dict(zip(HASHED_FIELDS, row[:-1]))
        stored_hash = row[-1]
        seq = fields["seq"]
        if seq != expected_seq:
            return _broken(checked, prev_hash, expected_seq, f"event {expected_seq} is missing")
        if fields["prev_hash"] != prev_hash:
            return _broken(checked, prev_hash, seq, f"event {seq} does not follow event {seq - 1}")
        if event_hash(fields) != stored_hash:
            return _broken(checked, prev_hash, seq, f"event {seq} was changed after it was written")
        if anchor is not None and seq == anchor[0] and stored_hash != anchor[1]:
            return _broken(checked, prev_hash, seq,
                           f"event {seq} is not the one anchored outside: the chain was written again from there")
        prev_hash, expected_seq, checked = stored_hash, seq + 1, checked + 1
    if anchor is not None and checked < anchor[0]:
        return _broken(checked, prev_hash, checked + 1,
                       f"the chain ends at event {checked}, before the anchored event {anchor[0]}: events were removed")
    if head is not None and (head.seq, head.hash) != (checked, prev_hash):
        return _broken(
            checked, prev_hash, checked + 1,
            f"the chain ends at event {checked} but its head says {head.seq}: events were removed from the end",
        )
    return ChainVerification(True, checked, checked, prev_hash)


def _broken(checked: int, last_hash: str, seq: int, problem: str) -> ChainVerification:
    return ChainVerification(False, checked, checked, last_hash, seq, problem)
