"""The audit chain checked in segments that can run side by side.

The walk is ``audit.selectors.audit_chain_verify``'s, cut into ranges of
sequence numbers: each segment checks that its events are all there, that
each one's hash is its own content's (``audit.chain.event_hash``, the one
definition), and that each follows the one before, the first one following
the last event of the previous segment as stored. Every segment passing is
the whole chain passing, and a million events take two workers half the time.
"""

from __future__ import annotations

from audit.chain import GENESIS, HASHED_FIELDS, event_hash
from audit.models import AuditEvent, ChainHead

SEGMENT = 250_000


def chain_head_seq() -> int:
    head = ChainHead.objects.filter(pk=1).values_list("seq", flat=True).first()
    return head or 0


def chain_segments(*, head_seq: int, size: int | None = None) -> list[tuple[int, int]]:
    """``[(1, 250000), (250001, 500000), …]`` up to the head; one empty segment for no events."""
    size = size or SEGMENT
    if head_seq <= 0:
        return [(1, 0)]
    return [(first, min(first + size - 1, head_seq)) for first in range(1, head_seq + 1, size)]


def chain_segment_verify(*, first: int, last: int, batch_size: int = 5000) -> dict:
    """Check events ``first..last``; the first break found, or none."""
    result = {"first": first, "last": last, "checked": 0, "ok": True, "break_seq": None,
              "problem": "", "last_hash": GENESIS}
    if first > 1:
        before = AuditEvent.objects.filter(seq=first - 1).values_list("hash", flat=True).first()
        if before is None:
            return _broken(result, first - 1, f"event {first - 1} is missing")
        prev_hash = before
    else:
        prev_hash = GENESIS
    result["last_hash"] = prev_hash
    expected = first
    events = (
        AuditEvent.objects.filter(seq__gte=first, seq__lte=last).order_by("seq")
        .values_list(*HASHED_FIELDS, "hash")
    )
    for row in events.iterator(chunk_size=batch_size):
        fields = dict(zip(HASHED_FIELDS, row[:-1]))
        seq = fields["seq"]
        if seq != expected:
            return _broken(result, expected, f"event {expected} is missing")
        if fields["prev_hash"] != prev_hash:
            return _broken(result, seq, f"event {seq} does not follow event {seq - 1}")
        if event_hash(fields) != row[-1]:
            return _broken(result, seq, f"event {seq} was changed after it was written")
        prev_hash, expected = row[-1], seq + 1
        result["checked"] += 1
        result["last_hash"] = prev_hash
    if expected <= last:
        return _broken(result, expected, f"event {expected} is missing (the chain's head says {last})")
    return result


def _broken(result: dict, seq: int, problem: str) -> dict:
    return result | {"ok": False, "break_seq": seq, "problem": problem}


def chain_merge(segments: list[dict]) -> dict:
    """One verdict for the chain from its segments' verdicts (in any order)."""
    if not segments:
        return {}
    segments = sorted(segments, key=lambda s: s["first"])
    broken = next((s for s in segments if not s["ok"]), None)
    last = segments[-1]
    merged = {
        "ok": broken is None,
        "checked": sum(s["checked"] for s in segments),
        "segments": len(segments),
        "last_seq": last["last"] if broken is None else broken["first"] + broken["checked"] - 1,
        "last_hash": last["last_hash"] if broken is None else broken["last_hash"],
        "break_seq": broken["break_seq"] if broken else None,
        "problem": broken["problem"] if broken else "",
    }
    # The day's own last event: the same in every segment's figures.
    for key in ("day_last_seq", "day_last_hash", "day_events"):
        if key in last:
            merged[key] = last[key]
    return merged
