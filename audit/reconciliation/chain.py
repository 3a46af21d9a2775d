"""The audit chain checked in segments that can run side by side.

The walk is ``trail.selectors.audit_chain_verify``'s, cut into ranges of
sequence numbers: each segment checks that its events are all there, that
each one's hash is its own content's (``trail.chain.event_hash``, the one
definition), and that each follows the one before, the first one following
the last event of the previous segment as stored. Every segment passing is
the whole chain passing, and a million events take two workers half the time.

A report walks what was written since the latest anchor kept outside
(``audit.anchors``), each anchor held to its event, and one earlier segment in
turn, chosen by the day: a chain rewritten from before the anchor no longer
holds it, and an edit that left every hash as it was is found within as
many nights as there are earlier segments. So a night's walk costs what the
night wrote plus one segment, whatever the history; ``verify_audit --full``
walks it all at once.
"""

from __future__ import annotations

from datetime import date

from audit.anchors import AnchorRefused, anchors_earlier
from trail.chain import GENESIS, HASHED_FIELDS, event_hash
from trail.models import AuditEvent, ChainHead
from trail.selectors import anchor_broken, anchor_latest, anchors_not_held

SEGMENT = 250_000


def chain_head_seq() -> int:
    head = ChainHead.objects.filter(pk=1).values_list("seq", flat=True).first()
    return head or 0


def chain_segments(*, head_seq: int, size: int | None = None) -> list[tuple[int, int]]:
    """``[(1, 250000), (250001, 500000), …]`` up to the head; one empty segment for no events."""
    return _segments(1, head_seq, size or SEGMENT) or [(1, 0)]


def _segments(first: int, last: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size - 1, last)) for start in range(first, last + 1, size)]


def segment_in_turn(*, last: int, size: int, day: date) -> tuple[int, int] | None:
    """Of ``1..last`` cut into segments of ``size``, the one walked on ``day``: each in turn, by the
    day, so every one is walked within as many nights as there are (None when there are none)."""
    segments = _segments(1, last, size)
    return segments[day.toordinal() % len(segments)] if segments else None


def chain_anchors() -> dict[int, str]:
    """Every anchor written before (``audit.anchors.anchors_earlier``); ``AnchorRefused`` if its file is refused."""
    return {anchor.seq: anchor.hash for anchor in anchors_earlier()}


def chain_segments_of_night(*, head_seq: int, day: date, size: int | None = None) -> list[tuple[int, int]]:
    """The segments a report walks: from the latest anchor to the head, and one earlier segment by the day.

    With no anchor (or an anchor file refused, which each segment then says)
    the whole chain is walked, as ``chain_segments`` cuts it.
    """
    size = size or SEGMENT
    try:
        latest = anchor_latest([(seq, h) for seq, h in chain_anchors().items() if seq <= head_seq])
    except AnchorRefused:
        latest = None
    if latest is None:
        return chain_segments(head_seq=head_seq, size=size)
    since = latest[0]
    recent = _segments(since + 1, head_seq, size) or [(since + 1, since)]
    return [segment_in_turn(last=since, size=size, day=day), *recent]


def chain_segment_verify(*, first: int, last: int, batch_size: int = 5000) -> dict:
    """Check events ``first..last``; the first break found, or none.

    The anchors written before are held too: those inside the segment, and
    every one up to it when the segment starts right after an anchored event
    (the walk since the latest anchor stands on them).
    """
    result = {"first": first, "last": last, "checked": 0, "ok": True, "break_seq": None,
              "problem": "", "last_hash": GENESIS}
    try:
        anchors = chain_anchors()
    except AnchorRefused as refused:
        return _broken(result, first, f"the anchors kept outside are refused: {refused}")
    held = {seq: h for seq, h in anchors.items() if first - 1 <= seq <= last}
    if first - 1 in anchors:
        held |= {seq: h for seq, h in anchors.items() if seq < first}
    result["anchors_held"] = len(held)
    missing = anchors_not_held({seq: h for seq, h in held.items() if seq < first})
    if missing:
        return _broken(result, missing[0].seq, missing[0].problem)
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
        if seq in held and row[-1] != held[seq]:
            return _broken(result, seq, anchor_broken(seq).problem)
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
        "walked": [f"{s['first']}-{s['last']}" for s in segments],
        "anchors_held": max((s.get("anchors_held", 0) for s in segments), default=0),
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
