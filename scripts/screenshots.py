"""Screenshots of the auditors' workspace from the demo data, for anyone who would look without logging in.

``scripts/screenshots [OUT_DIR]`` (default ``screenshots/``): a throwaway SQLite
database with the demo data (``load_demo``), its gaming day reconciled, the
development server on a free port, and the system's Chromium logged in as the
demo's auditor at 1,366 × 768, a screen many casino back offices still have:
one full-page PNG per page below.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = secrets.token_urlsafe(16)  # the demo auditor's, for this run's browser only
WIDTH, HEIGHT = 1366, 768


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _manage(env: dict, *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def _prepare(env: dict) -> None:
    _manage(env, "migrate", "--no-input")
    _manage(env, "load_demo")
    _manage(env, "reconcile", "--no-progress")
    # The demo's passwords are new and random on every run: this one is known to the browser.
    subprocess.run([sys.executable, "manage.py", "shell", "-c",
                    "from django.contrib.auth import get_user_model as u; a = u().objects.get(username='auditor');"
                    f" a.set_password('{PASSWORD}'); a.save()"], cwd=ROOT, env=env, check=True)


def _pages(env: dict) -> dict[str, str]:
    """Addresses of the pages worth a picture, found in the demo data."""
    code = (
        "import json; from rounds.models import Round; from progressive.models import Pool;"
        " from audit.models import ReconciliationReport as R;"
        " flagged = Round.objects.filter(status='flagged').order_by('dealt_at').first();"
        " report = R.objects.filter(status='complete').order_by('-created_at').first();"
        " pool = Pool.objects.order_by('code').first();"
        " from audit.models import ProtectionFinding as P;"
        " carding = P.objects.filter(code='suspected_hole_carding').order_by('pk').first();"
        " pair = P.objects.filter(code='suspected_collusion').order_by('pk').first();"
        " from rounds.models import Finding as F; from collections import Counter;"
        " mismatch = F.objects.filter(code='payout_mismatch').order_by('pk').first();"
        " dealers = Counter(F.objects.filter(code='payout_mismatch').values_list('round__dealer', flat=True));"
        " table = Round.objects.order_by('table__code').values_list('table__code', flat=True).first();"
        " print(json.dumps({'round': flagged and flagged.pk, 'report': report and report.pk, 'pool': pool and pool.pk,"
        " 'carding': carding and carding.pk, 'pair': pair and pair.pk, 'finding': mismatch and mismatch.pk,"
        " 'dealer': dealers.most_common(1)[0][0] if dealers else None, 'table': table}))"
    )
    found = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True,
                           capture_output=True, text=True)
    import json

    ids = json.loads(found.stdout.strip().splitlines()[-1])
    pages = {"01-tonight": "/admin/", "02-findings-queue": "/admin/rounds/finding/",
             "03-rounds": "/admin/rounds/round/"}
    if ids["round"]:
        pages["04-flagged-round"] = f"/admin/rounds/round/{ids['round']}/change/"
    if ids["report"]:
        pages["05-report"] = f"/admin/audit/reconciliationreport/{ids['report']}/change/"
    if ids["pool"]:
        pages["06-pool"] = f"/admin/progressive/pool/{ids['pool']}/change/"
    pages["07-audit-log"] = "/admin/trail/auditevent/"
    # Game protection: the queue, the planted cheats' findings and the hole-carder's page.
    pages["08-protection-queue"] = "/admin/audit/protectionfinding/"
    if ids["carding"]:
        pages["09-hole-carding-finding"] = f"/admin/audit/protectionfinding/{ids['carding']}/change/"
    if ids["pair"]:
        pages["10-collusion-finding"] = f"/admin/audit/protectionfinding/{ids['pair']}/change/"
    pages["11-players"] = "/admin/audit/protectionfinding/players/"
    pages["12-player-hole-carder"] = "/admin/audit/protectionfinding/players/CHEAT-HOLECARD/"
    # The workspace's second pass: a finding as a case, a dealer's and a table's pages, the cage's counts.
    if ids["finding"]:
        pages["13-finding-case"] = f"/admin/rounds/finding/{ids['finding']}/change/"
    if ids["dealer"]:
        pages["14-dealer"] = f"/admin/audit/reconciliationreport/dealers/{ids['dealer']}/"
    if ids["table"]:
        pages["15-table"] = f"/admin/audit/reconciliationreport/tables/{ids['table']}/"
    pages["16-counts"] = "/admin/audit/tablecount/"
    return pages


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT))
    from tests.browser import chromium

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{scratch}/demo.sqlite3", "DJANGO_ENV": "development"}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        _prepare(env)
        pages = _pages(env)
        port = _free_port()
        server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                                  cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.1)
            with sync_playwright() as p:
                browser = chromium(p)
                page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
                page.goto(f"{base}/admin/login/")
                page.fill("#id_username", "auditor")
                page.fill("#id_password", PASSWORD)
                page.click("input[type=submit]")
                page.wait_for_url(f"{base}/admin/")
                for name, address in pages.items():
                    page.goto(base + address)
                    page.wait_for_load_state("networkidle")
                    page.screenshot(path=str(out / f"{name}.png"), full_page=True)
                    print(out / f"{name}.png")
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "screenshots")
