"""``python manage.py load_demo``: something to look at on the embedded development default.

Logins ``admin`` (superuser), ``auditor`` (the auditor role) and
``supervisor`` (the floor's supervisor role) with random passwords, tables S01 and S02 on ``se-50kr`` and U01 and U02 on ``us-30k``, and
one gaming day of simulated rounds (the last complete one, 18:00 to 02:00)
posted through the real API: a Bearer key lent to each table for the load,
JSON to ``POST /api/v1/rounds/``, the whole HTTP stack but the socket.

Every simulated player decides from his own cards, but for three planted at
S01 for game protection to find (``rounds.simulation``: ``CHEAT-HOLECARD``
and the pair ``CHEAT-PAIR-A``, ``CHEAT-PAIR-B``). A pair sharing its cards
at the river shows only over many hands, so S01 also dealt the ``--history``
evenings before the demo day; those days are protected and reconciled here,
as the nightly job would have, and the demo day by ``scripts/serve``. S01's
cards are dealt from fixed seeds, so what it shows does not depend on the
date the demo is loaded.

The demo day is reconciled once, when it is posted, as the nightly job would.
Running it again posts no round twice, reconciles nothing again, and keeps
the logins' passwords and the tables' keys (a demo that is open in a browser
or posting stays logged in): only what is missing is made, and printed; the
others were printed when they were made. ``--new-secrets`` resets both
passwords and rotates every demo table's key. It refuses to run in
production.
"""

from __future__ import annotations

import json
import random
import secrets
import time
from io import StringIO
from datetime import datetime, timedelta
from datetime import time as clock
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.db.models import Count
from django.http.request import validate_host
from django.test import Client
from django.utils import timezone

from casino.roles import ROLES
from casino.services import user_roles_set
from infra import locks
from infra.gaming_day import gaming_day_of
from progressive.models import Pool
from progressive.services import pool_meters
from rounds.models import Finding, Round, Table
from rounds.selectors import config_version_in_force, pool_version_in_force
from rounds.services import table_key_lend, table_register
from rounds.simulation import TableSimulator
from trail.services import SYSTEM, Actor

DEMO_TABLES = (("S01", "se-50kr"), ("S02", "se-50kr"), ("U01", "us-30k"), ("U02", "us-30k"))
# Each login's role (casino/roles.py), and whether it is the superuser.
LOGINS = (("admin", "admin", True), ("auditor", "auditor", False), ("supervisor", "supervisor", False))
CHEATS_AT = "S01"  # the table where the planted cheats sit (rounds.simulation.PLANTED)
OPENS, SESSION = clock(18), timedelta(hours=8)  # 18:00 to 02:00, local time
# What a login or key kept from an earlier run is printed as: its secret is not kept to print.
KEPT = "kept (printed when it was made; --new-secrets makes a new one)"
LOAN = timedelta(hours=1)  # how long the keys lent to the load work
# Enough trouble to make the flagged views worth opening, rare enough to look real.
MISTAKES = {"dealer_error_rate": 0.04, "rule_break_rate": 0.01, "void_rate": 0.005}


class Command(BaseCommand):
    help = "Load demo logins, tables and a gaming day of rounds (development only; idempotent)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--rounds", type=int, default=150, help="rounds per table (default 150)"
        )
        parser.add_argument(
            "--history", type=int, default=4,
            help=f"evenings {CHEATS_AT} dealt before the demo day, each protected and reconciled (default 4)",
        )
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000",
            help="where the server will listen, for the links printed at the end",
        )
        parser.add_argument(
            "--new-secrets", action="store_true",
            help="reset the demo logins' passwords and rotate the demo tables' keys (default: keep them)",
        )

    def handle(self, *args, rounds: int, history: int, url: str, new_secrets: bool = False, **options):
        if settings.PRODUCTION:
            raise CommandError(
                "load_demo is for the embedded development default only: it resets the admin "
                "password and rotates table keys. It does not run with DJANGO_ENV=production."
            )
        if rounds < 1:
            raise CommandError("--rounds must be at least 1")
        if history < 0:
            raise CommandError("--history must be 0 or more")

        passwords = {login: _demo_user(login, role=role, superuser=superuser, new_password=new_secrets)
                     for login, role, superuser in LOGINS}
        keys = {code: _demo_table(code, config, new_key=new_secrets) for code, config in DEMO_TABLES}
        codes = [code for code, _ in DEMO_TABLES]
        # The last complete gaming day, so that no round is dealt in the future.
        day = gaming_day_of(timezone.now()) - timedelta(days=1)
        if Round.objects.filter(table__code__in=codes, gaming_day=day).exists():
            self.stdout.write(f"Gaming day {day} is already loaded; no rounds posted.")
        else:
            started = time.monotonic()
            earlier_posted = disagreements = 0
            # Keys lent for the load: the tables' own keys, in use by whoever posts with them, are kept.
            lent = {code: table_key_lend(table=Table.objects.get(code=code), actor=SYSTEM, lifetime=LOAN).key
                    for code in codes}
            for evening in range(history, 0, -1):
                earlier = day - timedelta(days=evening)
                counts = self._day_posted(earlier, keys={CHEATS_AT: lent[CHEATS_AT]}, rounds=rounds,
                                          evening=evening)
                earlier_posted, disagreements = earlier_posted + counts[0], disagreements + counts[1]
            # The demo day reconciled, as the nightly job would: the tonight page and the report show it.
            posted, wrong = self._day_posted(day, keys=lent, rounds=rounds, evening=0)
            disagreements += wrong
            self.stdout.write(
                f"Gaming day {day}: posted {posted} rounds to POST /api/v1/rounds/"
                + (f", and {earlier_posted} of {CHEATS_AT}'s {history} evenings before it" if history else "")
                + f", in {time.monotonic() - started:.1f} s."
            )
            if disagreements:
                self.stderr.write(
                    f"warning: the service judged {disagreements} rounds "
                    "otherwise than the simulator"
                )
        self._summary(day, codes)
        self._access(url, keys, passwords)

    def _day_posted(self, day, *, keys: dict[str, str], rounds: int, evening: int) -> tuple[int, int]:
        """One gaming day posted and reconciled, saying so as it goes (a demo takes a while)."""
        tables = ", ".join(sorted(keys))
        self.stdout.write(f"Dealing gaming day {day} at {tables}: {rounds * len(keys)} rounds …")
        self.stdout.flush()
        started = time.monotonic()
        counts = _post_gaming_day(day=day, keys=keys, rounds=rounds, evening=evening)
        call_command("reconcile", day=day.isoformat(), no_progress=True, stdout=StringIO())
        self.stdout.write(f"  posted and reconciled in {time.monotonic() - started:.1f} s")
        self.stdout.flush()
        return counts

    def _summary(self, day, codes) -> None:
        rounds = Round.objects.filter(table__code__in=codes, gaming_day=day)
        by_status = dict(rounds.values_list("status").annotate(n=Count("id")).order_by("status"))
        by_code = dict(
            Finding.objects.filter(round__in=rounds)
            .values_list("code").annotate(n=Count("id")).order_by("code")
        )
        self.stdout.write(f"Gaming day {day}'s rounds by status: {_counts(by_status)}")
        self.stdout.write(f"Findings by code: {_counts(by_code)}")
        for pool in Pool.objects.order_by("code"):
            self.stdout.write(f"Pool {pool.code}: meter {pool.meter} {pool.currency}")

    def _access(self, url, keys, passwords) -> None:
        url = url.rstrip("/")
        out = self.stdout
        out.write("")
        out.write("Table keys (post rounds with 'Authorization: Bearer <key>'):")
        for code, key in keys.items():
            out.write(f"  {code}  {key or KEPT}")
        out.write("")
        out.write(f"Admin:    {url}/admin/")
        out.write(f"API docs: {url}/api/docs/")
        out.write("")
        out.write("Logins:")
        described = {role.name: role.description for role in ROLES}
        for login, role, superuser in LOGINS:
            what = "superuser" if superuser else f"role {role}: {described[role]}"
            out.write(self.style.SUCCESS(f"  {login:<10}  {passwords[login] or KEPT}    ({what})"))


def _demo_user(username: str, *, role: str, superuser: bool = False, new_password: bool = False) -> str | None:
    """A demo login in ``role`` (casino/roles.py): its new password when it was made or
    ``new_password`` asks for one, else None (it keeps the one it has)."""
    user, created = get_user_model().objects.get_or_create(username=username)
    password = secrets.token_urlsafe(12) if created or new_password else None
    if password is not None:
        user.set_password(password)
    # Saved and given its role only where something changes: a demo run again writes no event.
    if password is not None or not user.is_active or user.is_superuser != superuser:
        user.is_active = True
        user.is_superuser = superuser
        user.save()
    if created or sorted(user.groups.values_list("name", flat=True)) != [role]:
        user_roles_set(user=user, roles=[role], actor=Actor.of_command("load_demo"))
    return password


def _demo_table(code: str, config: str, *, new_key: bool) -> str | None:
    """A demo table on ``config``: its new key when it was made or ``new_key`` asks for one, else
    None (it keeps the keys it has)."""
    table = Table.objects.filter(code=code).select_related("config").first()
    if table is None or new_key or table.config.name != config:
        return table_register(code=code, config_name=config, actor=SYSTEM).key
    return None


def _post_gaming_day(*, day, keys: dict[str, str], rounds: int, evening: int) -> tuple[int, int]:
    """Deal every table's session in time order and post each round as the table would
    (``evening``: how many evenings before the demo day, which seeds the cheats' table).

    Tables linked to one pool share its meter, so rounds go out in the order they
    were dealt and each pooled round is dealt against the meter as it stands.
    All or nothing: an interrupted load leaves no half-loaded day behind.
    Returns the rounds posted and how many the service judged otherwise than
    the simulator (always 0 unless one of them is wrong).
    """
    zone = ZoneInfo(settings.GAMING_DAY_TIME_ZONE)
    start = datetime.combine(day, OPENS, tzinfo=zone)
    tables = Table.objects.filter(code__in=keys).select_related("config")
    simulators, pool_ids = [], {}
    for table in tables:
        version = config_version_in_force(config=table.config, at=start)
        pool = None
        if version.pool_id:
            pool = pool_version_in_force(pool=version.pool, at=start).rules()
            pool_ids[table.code] = version.pool_id
        planted = table.code == CHEATS_AT
        simulators.append(
            TableSimulator(
                table=table.code, rules=version.rules(), pool=pool,
                rng=random.Random(f"{table.code} evening {evening}" if planted else f"{table.code} {day}"),
                start=start, mean_gap=SESSION / rounds, planted=planted, **MISTAKES,
            )
        )
    client = Client(HTTP_HOST=_allowed_host())
    remaining = dict.fromkeys((s.table for s in simulators), rounds)
    disagreements = 0
    with transaction.atomic():
        # One transaction of many rounds: their pools locked first, as every write
        # takes its locks (infra.locks), not after the audit head's.
        list(locks.rows_locked(Pool.objects.filter(pk__in=set(pool_ids.values())), set(pool_ids.values())))
        while any(remaining.values()):
            simulator = min(
                (s for s in simulators if remaining[s.table]), key=lambda s: (s.next_at, s.table)
            )
            meters = None
            if simulator.table in pool_ids:
                meters = pool_meters(Pool.objects.get(pk=pool_ids[simulator.table]))
            dealt = simulator.deal(meters)
            response = _post(client, dealt.record, keys[simulator.table])
            if response.status_code != 201:
                raise CommandError(
                    f"the API refused round {dealt.record['round']} of {simulator.table} "
                    f"with {response.status_code}: {response.content[:2000]!r}"
                )
            if response.json()["status"] != dealt.verdict.status:
                disagreements += 1
            remaining[simulator.table] -= 1
    return rounds * len(simulators), disagreements


def _post(client: Client, record: dict, key: str):
    body = json.dumps(record)
    while True:
        response = client.post(
            "/api/v1/rounds/", data=body, content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        if response.status_code != 429:
            return response
        # Faster than a real table: wait as the throttle asks, like a table would.
        time.sleep(float(response.headers.get("Retry-After") or 1))


def _allowed_host() -> str:
    for host in ("127.0.0.1", "localhost", "testserver"):
        if validate_host(host, settings.ALLOWED_HOSTS):
            return host
    raise CommandError("ALLOWED_HOSTS admits none of 127.0.0.1, localhost, testserver")


def _counts(counts: dict) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "none"
