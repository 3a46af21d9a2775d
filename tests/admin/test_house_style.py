"""The staff pages' look lives in templates and stylesheets: no Python module writes a style, and
every class the Python names has its rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from audit.reconciliation.services import report_run
from tests.reconciliation.days import DAY, post_day
from tests.test_import_layers import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
INLINE_STYLE = re.compile(r"""style=\\?["']""")
# Classes the Python modules write into the pages, and where their rules are.
HOUSE = "casino/admin.css"
REPORT_PAGE = ROOT / "audit/templates/admin/audit/reconciliationreport/change_form.html"


def test_no_python_module_writes_an_inline_style():
    modules = [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]
    found = [f"{path.relative_to(ROOT)}:{n}" for path in modules
             for n, line in enumerate(path.read_text().splitlines(), 1) if INLINE_STYLE.search(line)]
    assert found == []


def test_the_probe_finds_a_written_style():
    assert INLINE_STYLE.search("""format_html('<span style="color: red">{}</span>', x)""")
    assert not INLINE_STYLE.search("pygal.Bar(style=STANDING_LOOK)")


def test_every_class_the_python_writes_has_a_rule():
    house = Path(finders.find(HOUSE)).read_text()
    for name in ("status-badge", "status-verified", "status-flagged", "status-settled", "status-void",
                 "text-block", "figures-record", "charts", "chart", "chart-caption"):
        assert re.search(rf"\.{name}\b", house), name
    report = REPORT_PAGE.read_text()
    for name in ("report-scroll", "report-table", "report-record", "nowrap", "report-alert", "report-partly"):
        assert re.search(rf"\.{name}\b", report), name


@pytest.mark.django_db
def test_the_report_page_is_drawn_from_templates_with_the_house_stylesheet(admin_client):
    post_day(per_table=4)
    report = report_run(day_from=DAY)
    html = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    assert f'/static/{HOUSE}"' in html and 'class="report-table"' in html and 'class="report-record"' in html
    assert "style=" not in html.split("</head>", 1)[1].split("<svg", 1)[0]  # none before the first chart
