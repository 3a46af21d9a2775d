"""Issue 45, items 7 and 8, through a real SMTP listener: what reaches the supervisors' mail server.

A listener (aiosmtpd) on a free local port takes every mail Django's SMTP backend sends, as the
casino's relay would; each test reads what arrived, headers and all.
"""

from __future__ import annotations

import email
import email.policy
import socket
from datetime import date, timedelta
from decimal import Decimal

import pytest
from aiosmtpd.controller import Controller
from django.utils import timezone

from audit.notices import notices_send
from audit.protection.standing import standing_raise
from casino.services import user_roles_set
from tests import examples
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db
ROUNDS = "/api/v1/rounds/"


class Relay:
    """Keeps each message it is handed: (envelope recipients, the parsed message)."""

    def __init__(self):
        self.received: list[tuple[list[str], email.message.Message]] = []

    async def handle_DATA(self, server, session, envelope):
        # Read as a mail client reads it: folded headers unfolded, encoded words decoded.
        self.received.append((list(envelope.rcpt_tos),
                              email.message_from_bytes(envelope.content, policy=email.policy.default)))
        return "250 Message accepted for delivery"


@pytest.fixture
def relay(settings, django_user_model):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    handler = Relay()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_USE_TLS = "127.0.0.1", port, False
    boss = django_user_model.objects.create_user("boss", email="boss@casino.example", password="pw-for-tests-only")
    user_roles_set(user=boss, roles=["supervisor"], actor=SYSTEM)
    try:
        yield handler
    finally:
        controller.stop()


def test_thirty_overpaid_rounds_reach_the_mail_server_as_two_mails(relay, table_client, settings):
    settings.NOTICE_MISMATCH_AT_LEAST = {"SEK": Decimal("0.01")}
    client = table_client("S01", "se-50kr")
    example = next(e for e in examples.load("se-50kr.jsonl") if "payout_mismatch" in e["expect"]["codes"])
    for n in range(30):
        assert client.post(ROUNDS, {**example["record"], "round": f"flood-{n}"}, format="json").status_code == 201
        notices_send()
    assert len(relay.received) == 1
    notices_send(now=timezone.now() + settings.NOTICE_GROUP_WINDOW + timedelta(seconds=1))
    assert len(relay.received) == 2
    (to, first), (_, rest) = relay.received
    assert to == ["boss@casino.example"] and "Payout mismatch of" in first["Subject"]
    assert rest["Subject"].startswith("[table-audit] ") and "payout mismatches at S01" in rest["Subject"]


def test_an_id_with_a_line_feed_no_longer_silences_its_notice(relay, table_client):
    # A table can no longer store one ...
    client = table_client("S01", "se-50kr")
    record = examples.load("se-50kr.jsonl")[0]["record"]
    refused = client.post(ROUNDS, {**record, "round": "R-1\nBcc: someone@else.example"}, format="json")
    assert refused.status_code == 400 and list(refused.json()["errors"]) == ["round"]
    # ... and one stored before (or by another path) is mailed, its line feed written as its escape.
    day = date(2026, 11, 30)
    assert standing_raise(day=day, figure=5.0, code="suspected_sweetheart_dealing", key="D7|P\n9", threshold=4.0,
                          evidence={}, detail="errors in the player's favour", dealer="D7", player="P\n9",
                          day_from=day)
    notices_send()
    (to, mail), = relay.received
    assert to == ["boss@casino.example"]
    assert "D7|P\\x0a9" in mail["Subject"] and "\n" not in mail["Subject"]
    assert mail["Bcc"] is None
