"""``manage.py load_demo``: logins, tables and a day of rounds posted through the API, once."""

from __future__ import annotations

import re
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from audit.models import ReconciliationReport
from progressive.models import MeterEvent, Pool
from rounds.models import Round, Seat, Submission, Table
from trail.models import AuditEvent


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _load(rounds: int = 5, printed: list | None = None, **options) -> dict[str, str]:
    """Run the command and return the passwords and keys it printed, by login and table (and what
    it printed, into ``printed``)."""
    out = StringIO()
    call_command("load_demo", rounds=rounds, stdout=out, stderr=StringIO(), no_color=True, **options)
    text = out.getvalue()
    if printed is not None:
        printed.append(text)
    assert "http://127.0.0.1:8000/admin/" in text and "/api/docs/" in text
    return dict(re.findall(r"^  (admin|auditor|supervisor|[SU]0\d)\s+(\S+)", text, re.MULTILINE))


@pytest.mark.django_db
def test_load_demo_creates_logins_tables_and_a_day_of_rounds():
    printed = []
    passwords = _load(printed=printed)

    users = get_user_model().objects
    admin, auditor = users.get(username="admin"), users.get(username="auditor")
    supervisor = users.get(username="supervisor")
    assert supervisor.check_password(passwords["supervisor"]) and not supervisor.is_superuser
    assert list(supervisor.groups.values_list("name", flat=True)) == ["supervisor"]
    assert supervisor.has_perm("audit.add_tablecount")
    # What it says it posted is what its summary counts: the demo day's rounds, then S01's evenings.
    [text] = printed
    assert "Gaming day " in text and ": posted 20 rounds to POST /api/v1/rounds/, and 20 of S01's 4 evenings" in text
    assert re.search(r"'s rounds by status: .*", text)
    statuses = re.search(r"'s rounds by status: (.*)", text).group(1)
    assert sum(int(n) for n in re.findall(r"(\d+)", statuses)) == 20
    # It says what it is doing while it deals: a line as each day starts.
    assert len(re.findall(r"^Dealing gaming day \S+ at ", text, re.MULTILINE)) == 5
    assert admin.is_superuser and admin.is_staff and admin.check_password(passwords["admin"])
    assert not auditor.is_superuser and auditor.is_staff
    assert auditor.check_password(passwords["auditor"])
    assert auditor.has_perm("rounds.view_round") and auditor.has_perm("progressive.view_pool")
    assert auditor.has_perm("trail.view_auditevent")
    assert list(auditor.groups.values_list("name", flat=True)) == ["auditor"]
    assert not auditor.has_perm("rounds.change_round")

    assert dict(Table.objects.values_list("code", "config__name")) == {
        "S01": "se-50kr", "S02": "se-50kr", "U01": "us-30k", "U02": "us-30k",
    }
    for code in ("S02", "U01", "U02"):
        assert Round.objects.filter(table__code=code).count() == 5
    # The cheats' table also dealt the four evenings before, each protected and reconciled.
    assert Round.objects.filter(table__code="S01").count() == 25
    days = sorted({r.gaming_day for r in Round.objects.all()})
    assert len(days) == 5 and {r.gaming_day for r in Round.objects.exclude(table__code="S01")} == {days[-1]}
    # Every day reconciled once, the demo day too (as the nightly job would have).
    assert list(ReconciliationReport.objects.order_by("day_from").values_list("day_from", flat=True)) == days
    assert {s.player for s in Seat.objects.filter(round__table__code="S01", seat__lte=3)} == {
        "CHEAT-HOLECARD", "CHEAT-PAIR-A", "CHEAT-PAIR-B",
    }
    assert not Seat.objects.exclude(round__table__code="S01").filter(player__startswith="CHEAT").exists()
    # Posted through the API: every round came in as a kept, accepted body.
    assert Submission.objects.filter(outcome="accepted").count() == 40
    # The U tables feed one pool: each lit wager of a played round moved its meter once.
    lit = Seat.objects.filter(round__void=False, progressive_lit=True)
    assert lit.exclude(round__table__code__startswith="U").count() == 0
    assert MeterEvent.objects.filter(kind="contribution").count() == lit.count()
    # The pool's books open before the demo's rounds, though its opening was recorded after them:
    # the demo day's report closes the pool at the meter the pool page shows, and balances.
    pool = ReconciliationReport.objects.get(day_from=days[-1]).figures["pools"]["us-progressive"]
    meter = Pool.objects.get(code="us-progressive").meter
    opening = MeterEvent.objects.get(pool__code="us-progressive", seq=1)
    assert opening.created_at > Round.objects.order_by("dealt_at").first().dealt_at
    assert (Decimal(pool["closing"]), pool["balanced"]) == (meter, True) and Decimal(pool["opening"]) >= opening.amount


@pytest.mark.django_db
def test_running_it_again_changes_nothing_and_keeps_the_logins_and_keys_unless_asked(client):
    first = _load()
    counts = (Round.objects.count(), Submission.objects.count(), MeterEvent.objects.count(),
              ReconciliationReport.objects.count(), AuditEvent.objects.count())

    second = _load()

    # Nothing changed, so nothing is recorded either: no role set again, no person saved.
    assert (Round.objects.count(), Submission.objects.count(), MeterEvent.objects.count(),
            ReconciliationReport.objects.count(), AuditEvent.objects.count()) == counts
    assert Table.objects.count() == 4
    assert get_user_model().objects.filter(username__in=["admin", "auditor", "supervisor"]).count() == 3
    admin = get_user_model().objects.get(username="admin")
    assert second == dict.fromkeys(first, "kept") and admin.check_password(first["admin"])
    # The key S01 was given first still posts: the demo's table was not cut off.
    answer = client.get("/api/v1/rounds/", HTTP_AUTHORIZATION=f"Bearer {first['S01']}")
    assert answer.status_code != 401, answer.content

    third = _load(new_secrets=True)

    admin.refresh_from_db()
    assert third["admin"] not in (first["admin"], "kept") and third["S01"] not in (first["S01"], "kept")
    assert admin.check_password(third["admin"]) and not admin.check_password(first["admin"])
    assert client.get("/api/v1/rounds/", HTTP_AUTHORIZATION=f"Bearer {first['S01']}").status_code == 401


@pytest.mark.django_db
def test_load_demo_refuses_to_run_in_production(settings):
    settings.PRODUCTION = True
    with pytest.raises(CommandError, match="production"):
        call_command("load_demo", rounds=1, stdout=StringIO())
    assert not get_user_model().objects.filter(username="admin").exists()
    assert not Round.objects.exists()
