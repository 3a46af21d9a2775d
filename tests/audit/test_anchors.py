"""The chain's head is written outside, signed, and a chain that no longer holds it is caught."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
from datetime import date
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from audit.anchors import ANCHOR_FILE, Anchor, AnchorRefused, anchor_line, anchor_write, anchors_read
from tests.audit.conftest import ANCHOR_KEY, events_written
from trail.models import AuditEvent, ChainHead
from trail.selectors import audit_chain_verify
from tests.insider import as_owner, chain_rehashed_from

pytestmark = pytest.mark.django_db

KEY = ANCHOR_KEY
DAY = date(2026, 11, 30)
_write = events_written


def _past_the_triggers(sql: str, params=()) -> None:
    """As a superuser restoring a backup would: the session's triggers off for this statement."""
    with as_owner(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql, params)
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = origin")


def _cut_from(seq: int) -> None:
    """Remove the events from ``seq`` on and move the head back, so the chain verifies on its own."""
    _past_the_triggers("DELETE FROM audit_auditevent WHERE seq >= %s", [seq])
    last = AuditEvent.objects.order_by("-seq").first()
    ChainHead.objects.filter(pk=1).update(seq=last.seq, hash=last.hash)


def _lines(directory) -> list[dict]:
    return [json.loads(line) for line in (directory / ANCHOR_FILE).read_text().splitlines()]


def test_the_anchor_names_the_verified_head_signed_and_is_itself_recorded_after_it(anchored):
    events = _write(3)
    written = anchor_write(gaming_day=DAY)

    [line] = _lines(anchored)
    assert (line["seq"], line["hash"], line["gaming_day"]) == (events[-1].seq, events[-1].hash, "2026-11-30")
    # The signature computed again here, from the documented message, not by the module's own code.
    message = json.dumps({k: line[k] for k in ("at", "gaming_day", "hash", "seq")}, sort_keys=True,
                         separators=(",", ":"))
    assert line["signature"] == "hmac-sha256:" + hmac.new(KEY.encode(), message.encode(), hashlib.sha256).hexdigest()
    recorded = AuditEvent.objects.order_by("-seq").first()
    assert recorded.action == "audit.anchored" and recorded.seq == events[-1].seq + 1
    assert recorded.after["seq"] == events[-1].seq and recorded.after["hash"] == events[-1].hash
    assert recorded.after["written_to"] == ["AUDIT_ANCHOR_PATH"]
    assert [a.seq for a in anchors_read(anchored)] == [written.anchor.seq]


def test_verify_audit_holds_the_chain_to_the_anchor_file_and_catches_it_cut(anchored, capsys):
    events = _write(4)
    anchor_write(gaming_day=DAY)
    call_command("verify_audit", "--chain-only", expect_file=str(anchored))
    assert f"anchor {events[-1].seq}:{events[-1].hash} holds" in capsys.readouterr().out

    _cut_from(events[-1].seq)
    assert audit_chain_verify().ok  # the cut chain follows from itself
    with pytest.raises(CommandError, match="before the anchored event"):
        call_command("verify_audit", "--chain-only", expect_file=str(anchored / ANCHOR_FILE))
    # Without --expect-file, the anchors the nightly task wrote are the ones held.
    with pytest.raises(CommandError, match="before the anchored event"):
        call_command("verify_audit", "--chain-only")


def test_the_latest_anchor_of_the_file_is_the_one_held(anchored):
    first = _write(2)
    anchor_write(gaming_day=DAY)
    _write(2)
    anchor_write(gaming_day=date(2026, 12, 1))
    _cut_from(first[-1].seq + 2)  # the first anchor still holds, the second does not
    with pytest.raises(CommandError, match="before the anchored event"):
        call_command("verify_audit", "--chain-only", expect_file=str(anchored))


@pytest.mark.parametrize("tamper, refusal", [
    (lambda line: {**line, "hash": "f" * 64}, "signature does not match"),
    (lambda line: {**line, "seq": line["seq"] - 1}, "signature does not match"),
    (lambda line: {**line, "signature": None}, "unsigned"),
    (lambda line: {k: v for k, v in line.items() if k != "hash"}, "not an anchor"),
])
def test_an_edited_anchor_file_is_refused(anchored, tamper, refusal):
    _write(2)
    anchor_write(gaming_day=DAY)
    [line] = _lines(anchored)
    (anchored / ANCHOR_FILE).write_text(json.dumps(tamper(line)) + "\n")
    with pytest.raises(CommandError, match=f"anchor file refused: .*{refusal}"):
        call_command("verify_audit", "--chain-only", expect_file=str(anchored))


def test_an_anchor_forged_under_another_key_is_refused_and_so_is_its_whole_file(anchored, settings):
    events = _write(2)
    anchor_write(gaming_day=DAY)
    _cut_from(events[-1].seq)
    # The forger's anchor of the cut chain, signed under his own key and appended by hand:
    # anchor_write itself refuses a chain that no longer holds the anchor before.
    head = AuditEvent.objects.order_by("-seq").first()
    forged = anchor_line(Anchor(head.seq, head.hash, DAY, timezone.now()), key="someone-elses-key")
    with open(anchored / ANCHOR_FILE, "a") as file:
        file.write(forged + "\n")
    with pytest.raises(AnchorRefused, match="line 2: .*signature does not match"):
        anchors_read(anchored)
    with pytest.raises(CommandError, match="anchor file refused"):
        call_command("verify_audit", "--chain-only", expect_file=str(anchored))


def test_no_file_or_no_anchor_in_it_is_refused(anchored):
    with pytest.raises(CommandError, match="cannot read"):
        call_command("verify_audit", "--chain-only", expect_file=str(anchored / "nowhere.jsonl"))
    (anchored / ANCHOR_FILE).write_text("\n")
    with pytest.raises(CommandError, match="holds no anchor"):
        call_command("verify_audit", "--chain-only", expect_file=str(anchored))


def test_development_without_a_key_writes_unsigned_and_says_so(anchored, settings, caplog, capsys):
    settings.AUDIT_ANCHOR_KEY = ""
    _write(1)
    with caplog.at_level(logging.WARNING, logger="audit.anchors"):
        anchor_write(gaming_day=DAY)
    assert "AUDIT_ANCHOR_KEY is not set" in caplog.text
    assert _lines(anchored)[0]["signature"] is None
    call_command("verify_audit", "--chain-only", expect_file=str(anchored))
    assert "is unsigned" in capsys.readouterr().out
    settings.AUDIT_ANCHOR_KEY = KEY  # once a key is in force, an unsigned line is not believed
    with pytest.raises(CommandError, match="unsigned"):
        call_command("verify_audit", "--chain-only", expect_file=str(anchored))


def test_production_refuses_to_write_or_believe_an_unsigned_anchor(anchored, settings):
    settings.AUDIT_ANCHOR_KEY = ""
    anchor_write(gaming_day=DAY)
    settings.PRODUCTION = True
    before = AuditEvent.objects.count()
    with pytest.raises(ImproperlyConfigured, match="AUDIT_ANCHOR_KEY must be set"):
        anchor_write(gaming_day=DAY)
    assert len(_lines(anchored)) == 1 and AuditEvent.objects.count() == before
    with pytest.raises(AnchorRefused, match="unsigned"):
        anchors_read(anchored)


def test_nowhere_to_write_is_refused_by_the_command(settings):
    settings.AUDIT_ANCHOR_PATH = settings.AUDIT_ANCHOR_URL = ""
    with pytest.raises(CommandError, match="nowhere to go"):
        call_command("audit_anchor")


def test_a_broken_chain_is_not_anchored(anchored):
    events = _write(3)
    _past_the_triggers("UPDATE audit_auditevent SET actor_name = 'mallory' WHERE id = %s", [events[1].pk])
    with pytest.raises(CommandError, match="broken at event"):
        call_command("audit_anchor", day=DAY)
    assert not (anchored / ANCHOR_FILE).exists()


class _Receiver(BaseHTTPRequestHandler):
    status = 201
    bodies: list = []

    def do_POST(self):  # noqa: N802 (the standard library's name)
        self.bodies.append((self.headers["Content-Type"], self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(self.status)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    _Receiver.bodies, _Receiver.status = [], 201
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_the_anchor_is_posted_to_the_url(settings, receiver, capsys):
    settings.AUDIT_ANCHOR_PATH, settings.AUDIT_ANCHOR_KEY = "", KEY
    settings.AUDIT_ANCHOR_URL = f"http://127.0.0.1:{receiver.server_port}/anchors"
    events = _write(2)
    call_command("audit_anchor", day=DAY)
    [(content_type, body)] = _Receiver.bodies
    assert content_type == "application/json"
    posted = json.loads(body)
    assert (posted["seq"], posted["hash"]) == (events[-1].seq, events[-1].hash)
    assert capsys.readouterr().out.splitlines()[-1] == body.decode()


def test_a_receiver_that_does_not_take_the_anchor_records_no_anchoring(settings, receiver):
    settings.AUDIT_ANCHOR_PATH, settings.AUDIT_ANCHOR_KEY = "", KEY
    settings.AUDIT_ANCHOR_URL = f"http://127.0.0.1:{receiver.server_port}/anchors"
    _Receiver.status = 503
    _write(1)
    with pytest.raises(OSError):
        anchor_write(gaming_day=DAY)
    assert not AuditEvent.objects.filter(action="audit.anchored").exists()


def test_beat_anchors_each_gaming_day_after_its_reconciliation(anchored):
    from django_celery_beat.models import PeriodicTask

    from audit.tasks import anchor_chain

    nightly = PeriodicTask.objects.get(name="Nightly reconciliation")
    entry = PeriodicTask.objects.get(task="audit.anchor_chain")
    assert entry.enabled and entry.crontab.timezone == nightly.crontab.timezone
    assert int(entry.crontab.hour) == (int(nightly.crontab.hour) + 1) % 24
    events = _write(1)
    assert anchor_chain.apply(kwargs={"day": "2026-11-30"}).get() == f"{events[-1].seq}:{events[-1].hash}"
    assert _lines(anchored)[0]["gaming_day"] == "2026-11-30"


def test_check_deploy_asks_for_a_place_and_a_key(settings):
    from trail.checks import anchor_signed

    settings.AUDIT_ANCHOR_PATH = settings.AUDIT_ANCHOR_URL = settings.AUDIT_ANCHOR_KEY = ""
    assert [m.id for m in anchor_signed()] == ["audit.W002"]
    settings.AUDIT_ANCHOR_PATH = "/var/lib/table-audit/anchors"
    assert [m.id for m in anchor_signed()] == ["audit.E002"]
    settings.AUDIT_ANCHOR_KEY = KEY
    assert anchor_signed() == []


# ---- issue 27, item 12: the anchor must not follow a rewritten chain --------------------------------


def test_no_anchor_is_written_for_a_chain_rewritten_since_the_last_one(anchored, caplog):

    events = _write(4)
    anchor_write(gaming_day=DAY)
    chain_rehashed_from(events[1], "mallory")  # every event from there rehashed, the head included
    with caplog.at_level(logging.ERROR, logger="audit.anchors"), \
            pytest.raises(CommandError, match=f"event {events[-1].seq} is not the one anchored outside"):
        call_command("audit_anchor", day=date(2026, 12, 1))
    assert "ALERT: no anchor written" in caplog.text
    assert len(_lines(anchored)) == 1
    assert not AuditEvent.objects.filter(action="audit.anchored", after__gaming_day="2026-12-01").exists()


def test_an_anchor_sent_only_by_url_is_held_by_the_chain_that_recorded_sending_it(settings, receiver):

    settings.AUDIT_ANCHOR_PATH, settings.AUDIT_ANCHOR_KEY = "", KEY
    settings.AUDIT_ANCHOR_URL = f"http://127.0.0.1:{receiver.server_port}/anchors"
    events = _write(3)
    anchor_write(gaming_day=DAY)
    chain_rehashed_from(events[1], "mallory")  # the audit.anchored event itself left as it was
    with pytest.raises(AnchorRefused, match="not the one anchored outside"):
        anchor_write(gaming_day=DAY)
    assert len(_Receiver.bodies) == 1


def test_expect_file_holds_every_anchor_not_only_the_latest(anchored, capsys):

    events = _write(4)
    first = anchor_write(gaming_day=DAY).anchor
    chain_rehashed_from(events[1], "mallory")
    # What the old audit_anchor did next: the rewritten head anchored, signed with the real key.
    head = AuditEvent.objects.order_by("-seq").first()
    with open(anchored / ANCHOR_FILE, "a") as file:
        file.write(anchor_line(Anchor(head.seq, head.hash, date(2026, 12, 1), timezone.now()), key=KEY) + "\n")
    with pytest.raises(CommandError, match=f"event {first.seq} is not the one anchored outside"):
        call_command("verify_audit", "--chain-only", expect_file=str(anchored))
    assert f"audit chain broken at event {first.seq}" in capsys.readouterr().out


def test_every_anchor_of_the_file_holding_is_said(anchored, capsys):
    _write(2)
    anchor_write(gaming_day=DAY)
    _write(2)
    latest = anchor_write(gaming_day=date(2026, 12, 1)).anchor
    call_command("verify_audit", "--chain-only", expect_file=str(anchored))
    out = capsys.readouterr().out
    assert "all 2 anchors hold" in out and f"anchor {latest.seq}:{latest.hash} holds" in out
