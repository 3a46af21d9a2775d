"""The service's own code against a primary and its streaming replica, one step a process.

``python -m tests.faults.replica_driver STEP`` with ``DATABASE_URL`` on the
primary and ``DATABASE_REPLICA_URL`` on the replica (tests/faults/test_replica.py):

- ``seed``: two tables and their rounds posted through the API, and an auditor;
- ``post``: one more round of the first table (its ``nth`` after the seeded ones);
- ``lists``: the staff's lists and a detail, and the three CSV exports of the day;
- ``report``: the day's nightly report, computed in this process.

Each prints what it saw as JSON: statuses, counts, the CSVs.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime, timedelta, timezone

DAY = "2026-11-28"
START = datetime(2026, 11, 28, 20, 0, tzinfo=timezone(timedelta(hours=1)))
ROUNDS_PER_TABLE = 12


def _auditor():
    from django.contrib.auth.models import Permission, User

    user, made = User.objects.get_or_create(username="replica-auditor")
    if made:
        user.set_password("a-long-test-password")
        user.save()
        user.user_permissions.add(*Permission.objects.filter(
            codename__startswith="view_", content_type__app_label__in=["trail", "rounds", "progressive", "audit"]))
    return user


def _client():
    from django.test import Client

    client = Client(raise_request_exception=False)
    client.force_login(_auditor())
    return client


def _post(floor: dict, index: int, records: list[dict]) -> list[int]:
    from django.test import Client

    table = floor["tables"][index]
    answer = Client(raise_request_exception=False).post(
        "/api/v1/rounds/batch", json.dumps({"rounds": records}), content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {table['key']}",
    )
    assert answer.status_code == 200, answer.content
    return [item["status"] for item in answer.json()["results"]]


def _records(floor: dict, index: int, count: int, *, skip: int = 0) -> list[dict]:
    from bench.load import engine_rules
    from rounds.simulation import TableSimulator

    rules, pool = engine_rules(floor)
    code = floor["tables"][index]["code"]
    simulator = TableSimulator(table=code, rules=rules, pool=pool, rng=random.Random(index), start=START)
    dealt = [simulator.deal().record for _ in range(skip + count)]
    return dealt[skip:]


def seed() -> dict:
    from bench.load import _floor

    floor = _floor(2, "P")
    _auditor()
    statuses = [_post(floor, i, _records(floor, i, ROUNDS_PER_TABLE)) for i in range(2)]
    return {"floor": floor, "statuses": statuses}


def post(floor: dict, nth: int) -> dict:
    return {"statuses": _post(floor, 0, _records(floor, 0, 1, skip=ROUNDS_PER_TABLE + nth))}


def lists() -> dict:
    client = _client()
    seen = {}
    for name, path in [
        ("rounds", "/api/v1/rounds/"), ("findings", "/api/v1/findings/"),
        ("meter-events", "/api/v1/meter-events/"), ("hits", "/api/v1/hits/"),
        ("pool-versions", "/api/v1/pool-versions/"), ("meter-readings", "/api/v1/meter-readings/"),
        ("reports", "/api/v1/reports/"),
    ]:
        answer = client.get(path)
        results = answer.json().get("results", [])
        seen[name] = {"status": answer.status_code, "count": len(results), "first": results[:1]}
    for newest in seen["rounds"]["first"][:1]:
        detail = client.get(f"/api/v1/rounds/{newest['id']}/")
        seen["detail"] = {"status": detail.status_code, "round": detail.json().get("round")}
    for what in ("rounds", "findings", "audit-log"):
        answer = client.get(f"/api/v1/exports/{what}.csv", {"first_day": DAY, "last_day": DAY})
        body = b"".join(answer.streaming_content).decode() if answer.status_code == 200 else answer.content.decode()
        seen[f"export-{what}"] = {"status": answer.status_code, "csv": body}
    return seen


def report() -> dict:
    from datetime import date

    from audit.reconciliation.services import report_run

    made = report_run(day_from=date.fromisoformat(DAY))
    made.refresh_from_db()
    return {"id": made.pk, "status": made.status, "rounds": made.rounds, "alerts": made.figures["alerts"],
            "balanced": {code: pool["balanced"] for code, pool in made.figures["pools"].items()}}


def main(step: str) -> None:
    import django

    django.setup()
    given = json.loads(sys.stdin.read() or "{}")
    if step == "seed":
        out = seed()
    elif step == "post":
        out = post(given["floor"], given.get("nth", 0))
    elif step == "lists":
        out = lists()
    else:
        out = report()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
