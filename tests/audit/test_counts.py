"""The cage's counts: kept once, corrected with why, imported all or none, and set against the books."""

from __future__ import annotations

import io
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.utils import DatabaseError
from django.utils import timezone

from audit.counts import CountError, count_enter, counts_import, current_counts
from audit.models import TableCount
from audit.reconciliation.services import report_run
from books.report_reader import read_figures
from casino.services import user_roles_set
from infra.models import ImmutableRecordError
from rounds.models import Round
from rounds.services import table_register
from tests import examples
from tests.insider import as_owner
from tests.reconciliation.days import DAY, moved
from tests.security.people import authenticator, next_code
from trail.models import AuditEvent
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db
D = Decimal
FIGURES = {"drop": "12000", "fills": "3000", "credits": "500", "opening_inventory": "50000",
           "closing_inventory": "51000.50"}


@pytest.fixture
def cashier(django_user_model):
    user = django_user_model.objects.create_user("cage-sup", password="pw-for-tests-only")
    user_roles_set(user=user, roles=["supervisor"], actor=SYSTEM)
    return user


def _proof(user, password: str = "pw-for-tests-only") -> io.StringIO:
    """What a script gives ``--password-stdin``: the password, then the authenticator's code now."""
    return io.StringIO(f"{password}\n{next_code(authenticator(user))}\n")


@pytest.fixture
def s01(table_client):
    return table_client("S01", "se-50kr")


def test_a_count_is_kept_with_its_win_and_corrected_only_with_why(s01, cashier):
    first = count_enter(table_code="S01", gaming_day=DAY, amounts=FIGURES, user=cashier)
    # drop + credits + closing − fills − opening
    assert (first.currency, first.count_win) == ("SEK", D("12000") + D("500") + D("51000.50") - D("3000") - D("50000"))
    with pytest.raises(CountError, match="needs a note"):
        count_enter(table_code="S01", gaming_day=DAY, amounts={**FIGURES, "drop": "12100"}, user=cashier)
    second = count_enter(table_code="S01", gaming_day=DAY, amounts={**FIGURES, "drop": "12100"}, user=cashier,
                         note="a marker of 100 found under the tray")
    assert second.replaces == first and second.count_win - first.count_win == D("100")
    assert current_counts(day_from=DAY, day_to=DAY)[("S01", "SEK")].win == second.count_win
    entered, corrected = AuditEvent.objects.filter(action__startswith="count.").order_by("seq")
    assert (entered.action, corrected.action) == ("count.entered", "count.corrected")
    assert corrected.before["drop"] == "12000.00" and corrected.after["note"].startswith("a marker")


def test_bad_figures_are_named_by_field(s01, cashier):
    tomorrow = timezone.localdate() + timedelta(days=2)
    with pytest.raises(CountError) as refused:
        count_enter(table_code="NOPE", gaming_day=tomorrow, amounts={**FIGURES, "drop": "-1", "fills": "1.234",
                                                                     "credits": 1.5}, user=cashier)
    assert set(refused.value.errors) == {"table", "gaming_day", "drop", "fills", "credits"}
    assert not TableCount.objects.exists()


def test_a_count_is_never_changed_or_deleted(s01, cashier):
    count = count_enter(table_code="S01", gaming_day=DAY, amounts=FIGURES, user=cashier)
    with pytest.raises(ImmutableRecordError):
        count.save()
    # (TRUNCATE's refusal is held with every other protection's: tests/audit/test_protections.py.)
    for statement in ("UPDATE audit_tablecount SET drop = 0", "DELETE FROM audit_tablecount"):
        with pytest.raises(DatabaseError, match="refused"), as_owner(), connection.cursor() as cursor:
            cursor.execute("SAVEPOINT s")
            try:
                cursor.execute(statement)
            finally:
                cursor.execute("ROLLBACK TO SAVEPOINT s")


def test_an_import_keeps_every_line_or_none_and_names_the_bad_lines(s01, table_client, cashier, tmp_path):
    table_client("U01", "us-30k")
    header = "table,gaming_day,drop,fills,credits,opening_inventory,closing_inventory,note\n"
    # Tables in no order of theirs: every table is locked at once, before any count is written.
    good = (f"U01,{DAY},300,0,0,1000,1000,\nS01,{DAY},100,0,0,1000,1000,\n"
            f"S01,{DAY - timedelta(days=1)},200,0,0,1000,1000,\n")
    with pytest.raises(CountError) as refused:
        counts_import(text=header + good + f"S01,{DAY},x,0,0,1000,1000,\n", user=cashier)
    assert "line 5: drop" in refused.value.errors and not TableCount.objects.exists()
    path = tmp_path / "counts.csv"
    path.write_text(header + good)
    call_command("import_counts", str(path), "--user", "cage-sup", "--password-stdin", stdin=_proof(cashier))
    imported = TableCount.objects.filter(source="imported")
    assert sorted(imported.values_list("table__code", "currency")) == [("S01", "SEK"), ("S01", "SEK"), ("U01", "USD")]
    assert AuditEvent.objects.filter(action="count.entered").count() == 3
    # A table's day twice in one file: the second is a correction, and needs its note.
    with pytest.raises(CountError, match="needs a note"):
        counts_import(text=header + f"U01,{DAY},1,0,0,0,0,\n", user=cashier)
    assert imported.count() == 3
    with pytest.raises(CommandError, match="no active user who may enter counts"):
        call_command("import_counts", str(path), "--user", "nobody", "--password-stdin", stdin=io.StringIO("x\n"))
    with pytest.raises(CountError, match="the header lacks"):
        counts_import(text="table,day\nS01,2026-11-28\n", user=cashier)


def test_the_report_page_sets_the_count_against_what_was_paid(s01, staff):
    for example in examples.load("se-50kr.jsonl")[:8]:
        record = {**example["record"], "table": "S01"}
        assert s01.post("/api/v1/rounds/", moved(record, hours=0, prefix="c-"), format="json").status_code == 201
    report = report_run(day_from=DAY)
    paid = read_figures(report.figures).tables["S01"]["SEK"].win_paid_total
    supervisor = staff("supervisor")
    page = supervisor.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    assert "not counted" in page
    # The cage counted 250 more than the rounds explain.
    win = paid + D("250")
    entered = supervisor.post("/admin/audit/tablecount/enter/", {
        "table": "S01", "gaming_day": DAY.isoformat(), "drop": "0", "fills": "0", "credits": "0",
        "opening_inventory": "10000000", "closing_inventory": str(10000000 + win), "note": ""})
    assert entered.status_code == 302, entered.context["form"].errors
    assert TableCount.objects.get().count_win == win
    page = supervisor.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    assert "250.00 SEK" in page and "not counted" not in page
    assert 'as <a href="/admin/audit/tablecount/">counts</a>' in page
    assert staff("auditor", "reader").get("/admin/audit/tablecount/enter/").status_code == 403


def test_the_admin_s_usual_add_address_opens_the_count_form(staff):
    """Every other model's form is at …/add/: a supervisor who goes there gets the count's form."""
    moved = staff("supervisor").get("/admin/audit/tablecount/add/", {"table": "S01"})
    assert (moved.status_code, moved["Location"]) == (302, "/admin/audit/tablecount/enter/?table=S01")


def test_a_count_is_in_the_currency_the_table_dealt_in_that_day(s01, cashier):
    """A table moved to a configuration in another currency: a count of a day before the move is in the
    currency its rounds were dealt in, not the table's new one."""
    example = examples.load("se-50kr.jsonl")[0]
    assert s01.post("/api/v1/rounds/", moved({**example["record"], "table": "S01"}, hours=0, prefix="m-"),
                    format="json").status_code == 201
    day = Round.objects.get().gaming_day
    table_register(code="S01", config_name="us-30k", actor=SYSTEM)
    assert count_enter(table_code="S01", gaming_day=day, amounts=FIGURES, user=cashier).currency == "SEK"
    quiet = day - timedelta(days=3)  # no round that day: the configuration it has now
    assert count_enter(table_code="S01", gaming_day=quiet, amounts=FIGURES, user=cashier).currency == "USD"


def test_the_admin_imports_a_file_and_names_its_bad_lines(s01, staff):
    from django.core.files.uploadedfile import SimpleUploadedFile

    supervisor = staff("supervisor", "uploader")
    header = "table,gaming_day,drop,fills,credits,opening_inventory,closing_inventory,note\n"
    bad = SimpleUploadedFile("counts.csv", (header + f"S01,{DAY},12.345,0,0,0,0,\n").encode())
    page = supervisor.post("/admin/audit/tablecount/import/", {"file": bad}).content.decode()
    assert "line 2: drop" in page and not TableCount.objects.exists()
    good = SimpleUploadedFile("counts.csv", (header + f"S01,{DAY},100,0,0,0,0,\n").encode())
    assert supervisor.post("/admin/audit/tablecount/import/", {"file": good}).status_code == 302
    assert TableCount.objects.get().source == "imported"


HEADER = "table,gaming_day,drop,fills,credits,opening_inventory,closing_inventory,note\n"


@pytest.mark.parametrize("drop", ["1e5", "1_000", "\u0661\u0660\u0660", "+100", "100.", ".5", "1,000", "0x10",
                                  "Infinity", "NaN", "100\u00a0"], ids=repr)
def test_a_count_takes_amounts_only_in_the_wires_grammar(s01, cashier, drop):
    with pytest.raises(CountError) as refused:
        counts_import(text=HEADER + f"S01,{DAY},{drop},0,0,1000,1000,\n", user=cashier)
    assert {"line 2: drop", "line 2: file"} & set(refused.value.errors) and not TableCount.objects.exists()


@pytest.mark.parametrize("day", ["20261129", "0001-01-01", "2026-W48-1", "\u0662026-11-29", "2026-11-29T00:00"],
                         ids=repr)
def test_a_count_takes_an_iso_day_inside_the_books(s01, cashier, day):
    with pytest.raises(CountError) as refused:
        count_enter(table_code="S01", gaming_day=day, amounts=FIGURES, user=cashier)
    assert set(refused.value.errors) == {"gaming_day"}


def test_a_day_before_the_books_open_is_refused_by_its_month(s01, cashier, settings):
    settings.ROUND_WINDOW_OPENS = date(DAY.year, DAY.month, 1)  # a process reads a changed setting at once
    with pytest.raises(CountError, match="earliest month the books hold open"):
        count_enter(table_code="S01", gaming_day=settings.ROUND_WINDOW_OPENS - timedelta(days=1), amounts=FIGURES,
                    user=cashier)
    assert count_enter(table_code="S01", gaming_day=settings.ROUND_WINDOW_OPENS, amounts=FIGURES, user=cashier)


@pytest.mark.parametrize("text", [
    HEADER + f"S01,{DAY},{'1' * (200 * 1024)},0,0,1000,1000,\n",
    HEADER + f"S01,{DAY},100,0,0,1000,1000,a note\x00\n",
    HEADER + f'S01,{DAY},100,0,0,1000,1000,"a quote left open\n',
], ids=["field-over-128-KiB", "nul", "open-quote"])
def test_an_unreadable_import_is_refused_by_the_file_not_a_traceback(s01, cashier, staff, text, tmp_path):
    with pytest.raises(CountError) as refused:
        counts_import(text=text, user=cashier)
    assert set(refused.value.errors) == {"file"}
    path = tmp_path / "counts.csv"
    path.write_text(text)
    with pytest.raises(CommandError, match="nothing was kept"):
        call_command("import_counts", str(path), "--user", "cage-sup", "--password-stdin", stdin=_proof(cashier))
    supervisor = staff("supervisor")
    page = supervisor.post("/admin/audit/tablecount/import/",
                           {"file": SimpleUploadedFile("counts.csv", text.encode(), content_type="text/csv")})
    body = page.content.decode()
    assert page.status_code == 200 and ("file: " in body or "line 2: " in body)
    assert not TableCount.objects.exists()


def test_the_command_enters_counts_only_as_the_person_who_proves_it_is_he(s01, cashier, django_user_model,
                                                                            tmp_path, monkeypatch):
    """Naming a supervisor is not enough: ``--user`` without his password keeps nothing."""
    path = tmp_path / "counts.csv"
    path.write_text(HEADER + f"S01,{DAY},100,0,0,1000,1000,\n")
    for password in ("", "guess", "pw-for-tests-only "):
        with pytest.raises(CommandError, match="not cage-sup's password"):
            call_command("import_counts", str(path), "--user", "cage-sup", "--password-stdin",
                         stdin=io.StringIO(password + "\n"))
    monkeypatch.setattr("getpass.getpass", lambda prompt: "wrong")
    with pytest.raises(CommandError, match="not cage-sup's password"):
        call_command("import_counts", str(path), "--user", "cage-sup")
    assert not TableCount.objects.exists()
    monkeypatch.setattr("getpass.getpass", lambda prompt: "pw-for-tests-only")
    # His password is right; a supervisor proves his authenticator's code too, and a code works once.
    device = authenticator(cashier)
    monkeypatch.setattr("builtins.input", lambda prompt: "")
    with pytest.raises(CommandError, match="not the code cage-sup's authenticator app shows now"):
        call_command("import_counts", str(path), "--user", "cage-sup")
    given = next_code(device)
    monkeypatch.setattr("builtins.input", lambda prompt: given)
    call_command("import_counts", str(path), "--user", "cage-sup")
    with pytest.raises(CommandError, match="not the code"):
        call_command("import_counts", str(path), "--user", "cage-sup", "--password-stdin",
                     stdin=io.StringIO(f"pw-for-tests-only\n{given}\n"))
    (kept,) = TableCount.objects.all()
    assert (kept.entered_by, kept.entered_by_name) == (cashier, "cage-sup")
