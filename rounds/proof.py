"""The kept bodies prove the stored rounds: each accepted body read again, and compared.

A stored round says what the table sent three times over: the body kept as
it came (``Submission``), the record stored from it with its hash
(``Round.record``, ``Round.record_hash``), and the hash the audit chain wrote
when it stored it (``round.stored``). An insider who rewrites a round's
record and hash (and its payouts) leaves the body and the chain saying
otherwise; this reads each body again through the wire contract's own reader
and reports every round where the three differ. The settlement the engine
gives the stored record is the nightly report's re-verification.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import BigIntegerField, CharField, Min, OuterRef, Subquery
from django.db.models.functions import Cast

from rounds.models import Round, Submission
from rounds.services import record_hash
from rounds.wire.json_body import UnreadableBody, parse_json
from rounds.wire.serializers import RoundRecordSerializer, record_fast
from trail.models import AuditEvent

CHUNK = 2000


@dataclass(frozen=True, slots=True)
class BodyDifference:
    round_pk: int
    round_id: str
    problem: str


def bodies_differences(*, rounds=None) -> Iterator[BodyDifference]:
    """Every stored round (of ``rounds``, a queryset, or all) whose kept body, stored record,
    record hash and audit event do not all say the same."""
    rounds = Round.objects.all() if rounds is None else rounds
    stored_by_chain = AuditEvent.objects.filter(
        action="round.stored", object_type=Round._meta.label_lower,
        object_id=Cast(OuterRef("pk"), output_field=CharField()),
    ).values("after__record_hash")[:1]
    kept = Submission.objects.filter(round_id=OuterRef("pk"), outcome=Submission.Outcome.ACCEPTED)
    rows = (
        rounds.annotate(chain_hash=Subquery(stored_by_chain), body=Subquery(kept.values("body")[:1]))
        .order_by("pk").values_list("pk", "round_id", "record", "record_hash", "chain_hash", "body")
    )
    for pk, round_id, record, digest, chain_hash, body in rows.iterator(chunk_size=CHUNK):
        for problem in _problems(record, digest, chain_hash, body):
            yield BodyDifference(pk, round_id, problem)


def rounds_stored_after(seq: int):
    """The rounds the audit chain stored after event ``seq`` (a queryset; a few stored just before may join).

    A round's key is taken before its ``round.stored`` event, so two stored
    at once may meet the chain in the other order: every round from the
    smallest key stored after ``seq`` on is read, which holds them all.
    """
    stored = AuditEvent.objects.filter(seq__gt=seq, action="round.stored", object_type=Round._meta.label_lower)
    first = stored.aggregate(first=Min(Cast("object_id", output_field=BigIntegerField())))["first"]
    return Round.objects.none() if first is None else Round.objects.filter(pk__gte=first)


def _problems(record: dict, digest: str, chain_hash: str | None, body) -> list[str]:
    problems = []
    if record_hash(record) != digest:
        problems.append("the stored record does not hash to the stored record hash")
    if chain_hash != digest:
        problems.append(f"the audit chain stored it with hash {chain_hash}, not {digest}")
    if body is None:
        problems.append("no accepted body is kept for it")
        return problems
    read = _read(bytes(body))
    if read is None:
        problems.append("its kept body is not a round record")
    elif record_hash(read) != digest:
        problems.append("its kept body says another record than the one stored")
    return problems


def _read(body: bytes) -> dict | None:
    """The canonical record of a kept body, as the intake read it."""
    try:
        payload = parse_json(body)
    except UnreadableBody:
        return None
    record = record_fast(payload)
    if record is not None:
        return record
    serializer = RoundRecordSerializer(data=payload)
    return serializer.validated_data if serializer.is_valid() else None
