"""The chain and the rounds are proved from the latest anchor on: the cost follows what was written since.

What the walk since an anchor still catches (a chain rewritten from before
it, anything after it), what it leaves to the whole walk (an edit before it
that left every hash as it was), and the nightly report's turn through the
earlier segments that finds that too.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from audit.anchors import anchor_write
from audit.reconciliation.chain import chain_merge, chain_segment_verify, chain_segments_of_night
from rounds.models import Round
from rounds.proof import rounds_stored_after
from tests import examples
from tests.audit.conftest import events_written
from tests.insider import as_superuser, chain_rehashed_from
from trail.models import AuditEvent
from trail.selectors import audit_chain_verify

pytestmark = pytest.mark.django_db
ROUNDS = "/api/v1/rounds/"
DAY = date(2026, 11, 30)


_write = events_written


def _edited(event: AuditEvent, name: str) -> None:
    """An event's content changed past the triggers, its hash left as it was."""
    with as_superuser(), connection.cursor() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor_name = %s WHERE seq = %s", [name, event.seq])


def test_the_walk_since_an_anchor_reads_only_the_events_after_it(anchored):
    _write(6)
    anchor = anchor_write(gaming_day=DAY).anchor
    after = _write(3)
    result = audit_chain_verify(anchors=[(anchor.seq, anchor.hash)], since=(anchor.seq, anchor.hash))
    assert result.ok
    head = AuditEvent.objects.order_by("-seq").first()
    assert result.walked_from == anchor.seq + 1
    assert result.checked == head.seq - anchor.seq  # the anchoring event and the three after it
    assert (result.last_seq, result.last_hash) == (head.seq, head.hash)
    assert after[-1].seq <= head.seq


def test_an_edit_after_the_anchor_is_found_by_the_walk_since_it(anchored):
    _write(4)
    anchor = anchor_write(gaming_day=DAY).anchor
    after = _write(3)
    _edited(after[1], "mallory")
    result = audit_chain_verify(since=(anchor.seq, anchor.hash))
    assert not result.ok and result.break_seq == after[1].seq and "changed" in result.problem


def test_a_chain_rewritten_from_before_the_anchor_is_found_without_walking_there(anchored):
    events = _write(5)
    first = anchor_write(gaming_day=DAY).anchor
    _write(2)
    second = anchor_write(gaming_day=DAY + timedelta(days=1)).anchor
    chain_rehashed_from(events[1], "mallory")
    assert audit_chain_verify().ok  # the chain follows from itself again
    result = audit_chain_verify(anchors=[(first.seq, first.hash), (second.seq, second.hash)],
                                since=(second.seq, second.hash))
    assert not result.ok
    assert {b.seq for b in result.breaks} >= {first.seq, second.seq}
    assert "not the one anchored outside" in result.problem
    with pytest.raises(CommandError, match="not the one anchored outside"):
        call_command("verify_audit", "--chain-only")  # the anchors the nightly task wrote


def test_an_edit_before_the_anchor_that_kept_its_hash_is_left_to_the_whole_walk(anchored, capsys):
    events = _write(5)
    anchor_write(gaming_day=DAY)
    _write(2)
    _edited(events[2], "mallory")
    call_command("verify_audit", "--chain-only")
    out = capsys.readouterr().out
    assert "walked since anchor" in out and "--full walks from the first event" in out
    with pytest.raises(CommandError, match=f"broken at event {events[2].seq}: event {events[2].seq} was changed"):
        call_command("verify_audit", "--chain-only", "--full")


def test_the_nightly_anchor_walks_only_since_the_one_before(anchored, monkeypatch):
    import audit.anchors as anchors

    _write(5)
    first = anchor_write(gaming_day=DAY).anchor
    _write(3)
    walks = []
    real = anchors.audit_chain_verify
    monkeypatch.setattr(anchors, "audit_chain_verify", lambda **kw: walks.append(real(**kw)) or walks[-1])
    second = anchor_write(gaming_day=DAY + timedelta(days=1)).anchor
    assert walks[0].walked_from == first.seq + 1
    assert walks[0].checked == second.seq - first.seq


# ---- the nightly report -----------------------------------------------------------------------


def test_the_report_walks_since_the_latest_anchor_and_one_earlier_segment_by_the_day(anchored):
    _write(9)
    anchor = anchor_write(gaming_day=DAY).anchor
    _write(4)
    head = AuditEvent.objects.order_by("-seq").values_list("seq", flat=True).first()
    size = 3
    earlier = [(first, min(first + size - 1, anchor.seq)) for first in range(1, anchor.seq + 1, size)]
    seen = set()
    for n in range(len(earlier)):
        segments = chain_segments_of_night(head_seq=head, day=DAY + timedelta(days=n), size=size)
        assert segments[1:] == [(first, min(first + size - 1, head)) for first in range(anchor.seq + 1, head + 1, size)]
        seen.add(segments[0])
    assert seen == set(earlier)  # every earlier segment walked once in as many nights


def test_without_an_anchor_the_report_walks_the_whole_chain():
    _write(7)
    assert chain_segments_of_night(head_seq=7, day=DAY, size=3) == [(1, 3), (4, 6), (7, 7)]


def test_a_report_segment_holds_the_anchors_and_finds_a_chain_rewritten_from_before_them(anchored):
    events = _write(6)
    anchor = anchor_write(gaming_day=DAY).anchor
    _write(3)
    head = AuditEvent.objects.order_by("-seq").first()
    since = chain_segment_verify(first=anchor.seq + 1, last=head.seq)
    assert since["ok"] and since["anchors_held"] == 1 and since["checked"] == head.seq - anchor.seq
    chain_rehashed_from(events[0], "mallory")
    since = chain_segment_verify(first=anchor.seq + 1, last=head.seq)
    assert not since["ok"] and since["break_seq"] == anchor.seq
    assert "not the one anchored outside" in since["problem"]


def test_the_turn_through_earlier_segments_finds_an_edit_that_kept_its_hash(anchored):
    events = _write(9)
    anchor = anchor_write(gaming_day=DAY).anchor
    _write(2)
    _edited(events[4], "mallory")
    head = AuditEvent.objects.order_by("-seq").values_list("seq", flat=True).first()
    found_on = []
    for n in range(-(-anchor.seq // 3)):  # one turn through the earlier segments of three events
        segments = chain_segments_of_night(head_seq=head, day=DAY + timedelta(days=n), size=3)
        merged = chain_merge([chain_segment_verify(first=first, last=last) for first, last in segments])
        assert merged["walked"] == [f"{first}-{last}" for first, last in segments]
        if not merged["ok"]:
            found_on.append(n)
            assert merged["break_seq"] == events[4].seq
    assert len(found_on) == 1


def test_a_refused_anchor_file_is_said_by_the_report(anchored):
    _write(3)
    anchor_write(gaming_day=DAY)
    (anchored / "anchors.jsonl").write_text((anchored / "anchors.jsonl").read_text().replace('"seq": ', '"seq": 1'))
    result = chain_segment_verify(first=1, last=3)
    assert not result["ok"] and "anchors kept outside are refused" in result["problem"]


# ---- the rounds read again ------------------------------------------------------------------


@pytest.fixture
def two_nights(anchored, table_client):
    """Rounds stored before the anchor, then after it."""
    client = table_client("S01", "se-50kr")
    records = [e["record"] for e in examples.load("se-50kr.jsonl")[:6]]
    for record in records[:3]:
        assert client.post(ROUNDS, record, format="json").status_code == 201
    anchor = anchor_write(gaming_day=DAY).anchor
    for record in records[3:]:
        assert client.post(ROUNDS, record, format="json").status_code == 201
    return anchor, list(Round.objects.order_by("pk"))


def test_the_rounds_stored_after_an_anchor_are_those_the_chain_stored_after_it(two_nights):
    anchor, rounds = two_nights
    assert list(rounds_stored_after(anchor.seq).order_by("pk")) == rounds[3:]
    head = AuditEvent.objects.order_by("-seq").values_list("seq", flat=True).first()
    assert not rounds_stored_after(head).exists()


def test_verify_audit_reads_again_the_rounds_since_the_anchor_and_all_with_full(two_nights, capsys):
    anchor, rounds = two_nights
    call_command("verify_audit")
    assert f"3 round(s) stored since anchor {anchor.seq} read again" in capsys.readouterr().out
    late, early = rounds[-1], rounds[0]
    with as_superuser(), connection.cursor() as cursor:
        cursor.execute("UPDATE rounds_round SET record = jsonb_set(record, '{dealer}', '\"X\"') WHERE id IN (%s, %s)",
                       [late.pk, early.pk])
    with pytest.raises(CommandError, match="1 differences between stored rounds"):
        call_command("verify_audit")
    with pytest.raises(CommandError, match="2 differences between stored rounds"):
        call_command("verify_audit", "--full")
