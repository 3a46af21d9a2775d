"""One lock order (infra.locks), held by every write path: no deadlock, and no lock taken elsewhere."""

from __future__ import annotations

import copy
import re
import threading
from pathlib import Path

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from audit.models import VarianceFinding
from infra import locks
from progressive.models import Pool
from rounds.models import Finding, Round
from rounds.services import VoidError, ingest, round_void, table_register
from tests.progressive.records import ROUNDS, us_rounds
from tests.test_import_layers import LAYERS
from trail.services import SYSTEM, audit_record

ROOT = Path(__file__).resolve().parents[1]
APPS = tuple(sorted({layer.split("/")[0] for layer in LAYERS}))  # every folder of the code


def test_no_module_but_infra_locks_takes_a_row_lock():
    """A lock taken anywhere else would be outside the order: every one goes through infra.locks."""
    takers = []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts or path == ROOT / "infra" / "locks.py":
                continue
            text = path.read_text()
            if "select_for_update(" in text:
                takers.append(f"{path.relative_to(ROOT)}: select_for_update")
            # Hand-written locking SQL is allowed only where it is handed to the order's check.
            if re.search(r"FOR UPDATE", text) and "locks.raw_lock_statement(" not in text:
                takers.append(f"{path.relative_to(ROOT)}: FOR UPDATE")
    assert takers == []


@pytest.mark.django_db
def test_a_lock_below_one_already_held_is_refused_before_the_database_is_asked():
    pool = Pool.objects.get(code="us-progressive")
    with pytest.raises(locks.LockOrderError, match="progressive.Pool is locked after trail.ChainHead"):
        with transaction.atomic():
            audit_record(actor=SYSTEM, action="test.head_first")
            list(locks.rows_locked(Pool.objects.filter(pk=pool.pk), [pool.pk]))


@pytest.mark.django_db
def test_rows_of_one_rank_go_in_key_order():
    with pytest.raises(locks.LockOrderError, match="progressive.Pool 3 is locked after progressive.Pool 5"):
        with transaction.atomic():
            list(locks.rows_locked(Pool.objects.filter(pk=5), [5]))
            list(locks.rows_locked(Pool.objects.filter(pk=3), [3]))
    with transaction.atomic():  # the same rows again, or higher ones, are fine
        list(locks.rows_locked(Pool.objects.filter(pk=3), [3]))
        list(locks.rows_locked(Pool.objects.filter(pk=3), [3]))
        list(locks.rows_locked(Pool.objects.filter(pk=5), [5]))


@pytest.mark.django_db
def test_keys_of_two_models_of_one_rank_are_not_compared_as_one():
    """Findings and variance findings share a rank, in (model, key) order: a variance finding's
    key says nothing of a round's finding's."""
    with transaction.atomic():
        list(locks.rows_locked(VarianceFinding.objects.filter(pk=9), [9]))
        list(locks.rows_locked(Finding.objects.filter(pk=2), [2]))


@pytest.mark.django_db
def test_rows_held_already_may_be_asked_for_again_at_any_time():
    """A script's one transaction of many rounds locks the same pool after the head, again and
    again: re-taking a lock it holds waits for no one."""
    pool = Pool.objects.get(code="us-progressive")
    with transaction.atomic():
        list(locks.rows_locked(Pool.objects.filter(pk=pool.pk), [pool.pk]))
        audit_record(actor=SYSTEM, action="test.one")
        list(locks.rows_locked(Pool.objects.filter(pk=pool.pk), [pool.pk]))
        audit_record(actor=SYSTEM, action="test.two")


@pytest.mark.django_db
def test_each_transaction_starts_its_own_order():
    pool = Pool.objects.get(code="us-progressive")
    with transaction.atomic():
        audit_record(actor=SYSTEM, action="test.one")
    with transaction.atomic():
        list(locks.rows_locked(Pool.objects.filter(pk=pool.pk), [pool.pk]))


ROUNDS_EACH = 6


@pytest.fixture
def voider(transactional_db, django_user_model):
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("voider", password="a-long-test-password")
    user.user_permissions.add(Permission.objects.get(content_type__app_label="rounds", codename="void_round"))
    return django_user_model.objects.get(pk=user.pk)  # its permissions read afresh


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="row locks are PostgreSQL's")
@pytest.mark.parametrize("combine", [False, True], ids=["each-post-alone", "round-writer"])
def test_batches_single_posts_and_voids_on_one_pool_and_round_never_deadlock(settings, voider, combine):
    """The interleavings that deadlocked: a batch holding a conflicting resubmission and then a
    new pool round (round and head locked before the pool), against single posts of the pool and
    voids of the same rounds (round, then pool). Every answer is a real one: no 503, no 500.
    Single posts each in their own transaction (the most interleavings), and through the
    process's round writer, as production runs them."""
    settings.INGEST_COMBINE = combine
    try:
        _interleave(voider)
    finally:
        ingest._COMBINER.stop()  # its connections closed, so the test database can be dropped


def _interleave(voider):
    keys = {code: table_register(code=code, config_name="us-30k", actor=SYSTEM).key for code in ("L01", "L02")}
    stored = us_rounds("L01", "stored", ROUNDS_EACH)
    client = _client(keys["L01"])
    for record in stored:
        assert client.post(ROUNDS, record, format="json").status_code == 201
    stored_pks = list(Round.objects.filter(table__code="L01").order_by("pk").values_list("pk", flat=True))

    answers: list[int] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def batches():
        client = _client(keys["L01"])
        for n, record in enumerate(stored):
            conflicting = copy.deepcopy(record)
            conflicting["dealer"] = "D-other"
            fresh = us_rounds("L01", f"batch{n}", 1, start=n + 7)[0]
            response = client.post(f"{ROUNDS}batch", {"rounds": [conflicting, fresh]}, format="json")
            answers.append(response.status_code)
            answers.extend(item["status"] for item in response.json().get("results", []))

    def singles(code: str, prefix: str):
        def work():
            client = _client(keys[code])
            for record in us_rounds(code, prefix, ROUNDS_EACH * 2, start=3):
                answers.append(client.post(ROUNDS, record, format="json").status_code)
        return work

    def voids():
        for pk in reversed(stored_pks):
            try:
                round_void(round_pk=pk, user=voider, reason="machine malfunction")
            except VoidError:
                pass  # a void the rules refuse is an answer, not a deadlock

    threads = [_thread(work, errors, start) for work in (batches, singles("L02", "s2"), singles("L01", "s1"), voids)]
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    assert errors == []
    assert answers and set(answers) <= {200, 201, 409}, sorted(set(answers))
    assert set(Round.objects.filter(pk__in=stored_pks).values_list("status", flat=True)) == {"void"}


def _client(key: str) -> APIClient:
    client = APIClient()
    client.raise_request_exception = False
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def _thread(work, errors: list, start: threading.Barrier) -> threading.Thread:
    def run():
        try:
            start.wait(timeout=60)
            work()
        except BaseException as exc:  # noqa: BLE001 - every failure is reported by the test
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_the_order_names_every_model_the_service_locks():
    assert {label for rank in locks.RANKS for label in rank} >= {
        "progressive.Pool", "rounds.Round", "trail.ChainHead", "rounds.Finding",
    }
