"""The walk that proves the audit log unbroken."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .chain import GENESIS, HASHED_FIELDS, event_hash
from .models import AuditEvent, ChainHead


@dataclass(frozen=True, slots=True)
class ChainBreak:
    seq: int
    problem: str


@dataclass(frozen=True, slots=True)
class ChainVerification:
    ok: bool
    checked: int
    last_seq: int
    last_hash: str
    break_seq: int | None = None  # the first break's, as ``breaks[0]``
    problem: str = ""
    breaks: tuple[ChainBreak, ...] = ()
    walked_from: int = 1  # the first event read whole; those before it were held to their anchors


def anchor_latest(anchors: Sequence[tuple[int, str]]) -> tuple[int, str] | None:
    """The anchor a walk may start from: the latest one, or none."""
    return max(anchors, default=None)


def audit_chain_verify(
    *, batch_size: int = 5000, anchor: tuple[int, str] | None = None,
    anchors: Sequence[tuple[int, str]] = (), since: tuple[int, str] | None = None,
) -> ChainVerification:
    """Walk every event in order; report every one that does not follow from the one before.

    An edited event no longer matches its hash; a deleted one leaves a gap in
    ``seq`` and a ``prev_hash`` that points at nothing; a reordered one points
    at the wrong predecessor. The walk goes on past a break, each event held
    to the one stored before it, so one run names every damaged place, not
    only the first. Memory stays flat: events stream in batches.

    A chain rehashed from an edited event follows from itself again; what
    catches it is an anchor, an event's (seq, hash) kept outside the
    database when it was written: each of ``anchors`` (and ``anchor``) must
    still be in the chain with that hash.

    ``since``, one of those anchors, starts the walk after its event: every
    event before it is held to its anchors only (one look-up), so the walk's
    cost follows what was written since. Whoever rewrites an event before it
    and every hash after is still caught (the anchored event no longer has its
    hash); an edit that leaves the hashes as they were is found only by the
    walk from the first event, which the nightly report does one segment at a
    time (``audit.reconciliation.chain``) and ``verify_audit --full`` at once.
    """
    held = dict(anchors)
    if anchor is not None:
        held[anchor[0]] = anchor[1]
    # The head is read first: events written while the walk runs lie beyond it
    # and are left for the next walk, so a busy service never looks broken.
    head = ChainHead.objects.filter(pk=1).first()
    events = AuditEvent.objects.order_by("seq")
    if head is not None:
        events = events.filter(seq__lte=head.seq)
    breaks: list[ChainBreak] = []
    expected_seq, prev_hash, checked = 1, GENESIS, 0
    if since is not None:
        held[since[0]] = since[1]
    if since is not None and head is not None and since[0] > head.seq:
        # Anchored beyond the head: said below as events removed from the end; walk from the one before.
        since = anchor_latest([(seq, digest) for seq, digest in held.items() if seq <= head.seq])
    if since is not None:
        breaks += anchors_not_held({seq: digest for seq, digest in held.items() if seq <= since[0]})
        # From the anchor's own hash: a chain rewritten from before it does not follow it.
        expected_seq, prev_hash = since[0] + 1, since[1]
        events = events.filter(seq__gt=since[0])
    for row in events.values_list(*HASHED_FIELDS, "hash").iterator(chunk_size=batch_size):
        fields = dict(zip(HASHED_FIELDS, row[:-1]))
        stored_hash = row[-1]
        seq = fields["seq"]
        if seq != expected_seq:
            gone = f"event {expected_seq}" if seq == expected_seq + 1 else f"events {expected_seq} to {seq - 1}"
            breaks.append(ChainBreak(expected_seq, f"{gone} {'is' if seq == expected_seq + 1 else 'are'} missing"))
        elif fields["prev_hash"] != prev_hash:
            breaks.append(ChainBreak(seq, f"event {seq} does not follow event {seq - 1}"))
        if event_hash(fields) != stored_hash:
            breaks.append(ChainBreak(seq, f"event {seq} was changed after it was written"))
        if seq in held and stored_hash != held[seq]:
            breaks.append(anchor_broken(seq))
        prev_hash, expected_seq, checked = stored_hash, seq + 1, checked + 1
    last_seq = expected_seq - 1
    for seq in sorted(s for s in held if s > last_seq):
        breaks.append(ChainBreak(
            last_seq + 1, f"the chain ends at event {last_seq}, before the anchored event {seq}: events were removed"))
    if head is not None and (head.seq, head.hash) != (last_seq, prev_hash):
        breaks.append(ChainBreak(
            last_seq + 1,
            f"the chain ends at event {last_seq} but its head says {head.seq}: events were removed from the end",
        ))
    walked_from = since[0] + 1 if since is not None else 1
    if not breaks:
        return ChainVerification(True, checked, last_seq, prev_hash, walked_from=walked_from)
    first = breaks[0]
    return ChainVerification(False, checked, last_seq, prev_hash, first.seq, first.problem, tuple(breaks),
                             walked_from)


def anchors_not_held(held: dict[int, str]) -> list[ChainBreak]:
    """Each anchored event that is gone or no longer has its anchored hash (one look-up by ``seq``)."""
    found = dict(AuditEvent.objects.filter(seq__in=list(held)).values_list("seq", "hash"))
    breaks = []
    for seq in sorted(held):
        if seq not in found:
            breaks.append(ChainBreak(seq, f"event {seq}, anchored outside, is missing: events were removed"))
        elif found[seq] != held[seq]:
            breaks.append(anchor_broken(seq))
    return breaks


def anchor_broken(seq: int) -> ChainBreak:
    return ChainBreak(seq, f"event {seq} is not the one anchored outside: the chain was written again from there")
