"""POST /api/v1/rounds/ against the wire contract (shared/spec/ROUND_RECORD.md)."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from progressive.models import MeterEvent, Pool
from rounds.models import Finding, Round, Seat, Submission, TableKey
from rounds.services import table_register
from trail.services import SYSTEM

from .records import ROUNDS, record, seat, us_record

pytestmark = pytest.mark.django_db


def post_raw(client: APIClient, body: bytes):
    return client.generic("POST", ROUNDS, body, content_type="application/json")


def encoded(data) -> bytes:
    return json.dumps(data).encode()


def error_at(errors, *path):
    """The messages at ``path`` of an error tree (lists and string-keyed dicts)."""
    node = errors
    for key in path:
        node = node[int(key)] if isinstance(node, list) else node[str(key)]
    assert isinstance(node, list) and node and all(isinstance(m, str) for m in node), node
    return node


def stored_state() -> dict:
    """Everything a resubmission must leave alone."""
    return {
        "rounds": list(Round.objects.values_list("pk", "status", "record_hash")),
        "seats": list(Seat.objects.order_by("pk").values()),
        "findings": list(Finding.objects.order_by("pk").values_list("pk", "code")),
        "events": list(MeterEvent.objects.order_by("pk").values_list("pk", "kind", "amount")),
        "meter": Pool.objects.get(code="us-progressive").meter,
    }


# ---- new rounds and resubmissions ----------------------------------------------


def test_a_new_round_is_201_and_stored_once(table_client):
    client = table_client("S01", "se-50kr")
    response = client.post(ROUNDS, record(), format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["status"] == "verified"
    stored = Round.objects.get()
    assert (stored.table.code, stored.round_id) == ("S01", "R-1")
    assert stored.seats.count() == 2
    submission = Submission.objects.get()
    assert (submission.outcome, submission.http_status) == ("accepted", 201)
    assert submission.round_id == stored.pk


def test_identical_resubmission_is_200_and_counts_nothing_twice(table_client):
    client = table_client("U01", "us-30k")
    first = client.post(ROUNDS, us_record(), format="json")
    assert first.status_code == 201
    before = stored_state()
    assert before["meter"] == Decimal("10004.00")

    again = client.post(ROUNDS, us_record(), format="json")

    assert again.status_code == 200
    assert again.json() == first.json()
    assert stored_state() == before
    assert list(Submission.objects.order_by("pk").values_list("outcome", "http_status")) == [
        ("accepted", 201), ("replayed", 200),
    ]


def test_amounts_written_differently_are_one_canonical_record(table_client):
    client = table_client("S01", "se-50kr")
    as_text = record()
    as_integer = record()
    as_cents = record()
    for bet in ("ante", "blind"):
        as_integer["seats"][0][bet] = 100
        as_cents["seats"][0][bet] = "100.00"
    as_integer["seats"][0]["paid"]["ante"] = -100
    as_cents["seats"][0]["paid"]["ante"] = "-100.00"
    as_cents["board"] = [card[0] + card[1].upper() for card in as_cents["board"]]  # suits any case

    assert client.post(ROUNDS, as_text, format="json").status_code == 201
    before = stored_state()
    assert client.post(ROUNDS, as_integer, format="json").status_code == 200
    assert client.post(ROUNDS, as_cents, format="json").status_code == 200
    assert stored_state() == before
    assert Round.objects.get().record["seats"][0]["ante"] == "100.00"


def test_changed_resubmission_is_409_kept_and_flags_the_stored_round(table_client):
    client = table_client("S01", "se-50kr")
    assert client.post(ROUNDS, record(), format="json").status_code == 201
    stored = Round.objects.get()
    settled_before = list(Seat.objects.order_by("seat").values())
    changed = record()
    changed["seats"][1]["paid"]["play"] = "400"  # the dealer now claims seat 2 won its Play
    body = encoded(changed)

    response = post_raw(client, body)

    assert response.status_code == 409
    answer = response.json()
    assert answer["code"] == "conflicting_resubmission"
    assert answer["round"]["status"] == "flagged"
    conflict = Submission.objects.get(outcome="conflict")
    assert bytes(conflict.body) == body
    assert (conflict.http_status, conflict.claimed_round) == (409, "R-1")
    assert conflict.round_id == stored.pk
    after = Round.objects.get()
    assert after.status == "flagged"
    assert after.record_hash == stored.record_hash and after.record == stored.record
    assert list(Seat.objects.order_by("seat").values()) == settled_before
    finding = Finding.objects.get(round=after)
    assert finding.code == "conflicting_resubmission"
    assert [f["code"] for f in answer["round"]["findings"]] == ["conflicting_resubmission"]
    # The first body still replays as itself, and stays flagged.
    replay = client.post(ROUNDS, record(), format="json")
    assert replay.status_code == 200 and replay.json()["status"] == "flagged"


# ---- who may post ----------------------------------------------------------------


def _with_key(key: str | None) -> APIClient:
    client = APIClient()
    if key is not None:
        client.credentials(HTTP_AUTHORIZATION=key)
    return client


@pytest.mark.parametrize(
    "header",
    [
        None,
        "Bearer ta_0123456789ab_not-the-secret",
        "Bearer ",
        "Bearer nonsense",
        "Bearer ta__secret",
        "Bearer ta_\x00_secret",
        "Bearer ta_" + "f" * 200 + "_secret",
        "Token ta_0123456789ab_secret",
        "Basic dGFibGU6a2V5",
    ],
    ids=[
        "none", "wrong", "empty", "malformed", "no-id",
        "nul-id", "long-id", "token-scheme", "basic",
    ],
)
def test_without_valid_table_credentials_is_401_and_nothing_is_kept(table_client, header):
    table_client("S01", "se-50kr")
    response = _with_key(header).post(ROUNDS, record(), format="json")
    assert response.status_code == 401, response.json()
    assert response.json()["code"] in {"not_authenticated", "authentication_failed"}
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert not Submission.objects.exists() and not Round.objects.exists()


def test_a_wrong_secret_for_a_real_key_id_is_401(table_client):
    client = table_client("S01", "se-50kr")
    key = client._credentials["HTTP_AUTHORIZATION"]
    assert _with_key(key[:-2] + "xx").post(ROUNDS, record(), format="json").status_code == 401
    assert client.post(ROUNDS, record(), format="json").status_code == 201


def test_a_rotated_key_works_within_its_grace_and_not_after(table_client):
    old = table_client("S01", "se-50kr")
    new_key = table_register(
        code="S01", config_name="se-50kr", actor=SYSTEM, grace=timedelta(hours=1)
    ).key
    new = _with_key(f"Bearer {new_key}")

    assert old.post(ROUNDS, record("R-1"), format="json").status_code == 201
    assert new.post(ROUNDS, record("R-2"), format="json").status_code == 201

    old_key = TableKey.objects.get(table__code="S01", expires_at__isnull=False)
    old_key.expires_at = timezone.now() - timedelta(seconds=1)
    old_key.save(update_fields=["expires_at"])
    assert old.post(ROUNDS, record("R-3"), format="json").status_code == 401
    assert new.post(ROUNDS, record("R-3"), format="json").status_code == 201


def test_rotation_without_grace_ends_the_old_key_at_once(table_client):
    old = table_client("S01", "se-50kr")
    table_register(code="S01", config_name="se-50kr", actor=SYSTEM)
    assert old.post(ROUNDS, record(), format="json").status_code == 401


def test_a_deactivated_table_cannot_post(table_client):
    client = table_client("S01", "se-50kr")
    client.table.active = False
    client.table.save(update_fields=["active"])
    assert client.post(ROUNDS, record(), format="json").status_code == 401


def test_a_staff_user_cannot_post_rounds(auditor_client):
    assert auditor_client.post(ROUNDS, record(), format="json").status_code == 403
    assert not Round.objects.exists()


def test_another_tables_round_is_403_and_kept_as_forbidden(table_client):
    table_client("S02", "se-50kr")
    client = table_client("S01", "se-50kr")
    body = encoded(record(table="S02"))

    response = post_raw(client, body)

    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert "table" in response.json()["errors"]
    assert not Round.objects.exists()
    kept = Submission.objects.get()
    assert (kept.outcome, kept.http_status) == ("forbidden", 403)
    assert (kept.table.code, kept.claimed_round) == ("S01", "R-1")
    assert bytes(kept.body) == body


# ---- bodies that are not a round: 400, field by field, and kept ---------------------


def _seat0(**changes):
    def change(data):
        data["seats"][0].update(changes)
    return change


def _paid0(**changes):
    def change(data):
        data["seats"][0]["paid"].update(changes)
    return change


def _drop(*path):
    def change(data):
        node = data
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return change


def _set(**fields):
    def change(data):
        data.update(fields)
    return change


def _eight_seats(data):
    data["board"] = ["2c", "3c", "4c", "5c", "6c"]
    data["dealer_cards"] = ["7c", "8c"]
    cards = [r + s for r in "9TJQKA" for s in "dhs"][:16]
    data["seats"] = [seat(n, cards[2 * n - 2 : 2 * n]) for n in range(1, 9)]


def _seat_twice(data):
    data["seats"][1]["seat"] = 1


INVALID = [
    ("missing-dealt_at", _drop("dealt_at"), ("dealt_at",)),
    ("missing-table", _drop("table"), ("table",)),
    ("missing-seats", _drop("seats"), ("seats",)),
    ("missing-ante", _drop("seats", 0, "ante"), ("seats", 0, "ante")),
    ("missing-decision", _drop("seats", 0, "decision"), ("seats", 0, "decision")),
    ("missing-board", _drop("board"), ("board",)),
    ("missing-hole", _drop("seats", 0, "hole"), ("seats", 0, "hole")),
    ("card-10h", _set(board=["10h", "Kh", "Qh", "Jh", "Th"]), ("board", 0)),
    ("card-Xx", _seat0(hole=["9s", "Xx"]), ("seats", 0, "hole", 1)),
    ("card-not-text", _set(dealer_cards=["2c", 2]), ("dealer_cards", 1)),
    ("board-4", _set(board=["Ah", "Kh", "Qh", "Jh"]), ("board",)),
    ("hole-3", _seat0(hole=["9s", "9d", "8d"]), ("seats", 0, "hole")),
    ("dealer-3", _set(dealer_cards=["Ah", "Kh", "Qh"]), ("dealer_cards",)),
    ("seat-twice", _seat_twice, ("seats", "non_field_errors")),
    ("seat-0", _seat0(seat=0), ("seats", 0, "seat")),
    ("seat-8", _seat0(seat=8), ("seats", 0, "seat")),
    ("eight-seats", _eight_seats, ("seats", "non_field_errors")),
    ("no-seats", _set(seats=[]), ("seats", "non_field_errors")),
    ("negative-ante", _seat0(ante="-100"), ("seats", 0, "ante")),
    ("negative-trips-int", _seat0(trips=-50), ("seats", 0, "trips")),
    ("three-decimals", _seat0(ante="100.001"), ("seats", 0, "ante")),
    ("three-decimals-paid", _paid0(ante="-100.001"), ("seats", 0, "paid", "ante")),
    ("float-1.5", _seat0(blind=1.5), ("seats", 0, "blind")),
    ("float-100.0", _seat0(ante=100.0), ("seats", 0, "ante")),
    ("float-paid", _paid0(blind=-100.0), ("seats", 0, "paid", "blind")),
    ("amount-with-newline", _seat0(ante="100\n"), ("seats", 0, "ante")),
    ("amount-bool", _seat0(play=True), ("seats", 0, "play")),
    ("unknown-decision", _seat0(decision="preflop_5x"), ("seats", 0, "decision")),
    ("unknown-paid-key", _paid0(insurance="10"), ("seats", 0, "paid", "insurance")),
    ("naive-dealt_at", _set(dealt_at="2026-11-29T21:14:03"), ("dealt_at",)),
    ("date-only-dealt_at", _set(dealt_at="2026-11-29"), ("dealt_at",)),
    ("year-1-dealt_at", _set(dealt_at="0001-01-01T00:00:00+01:00"), ("dealt_at",)),
    ("round-65", _set(round="R" * 65), ("round",)),
    ("round-empty", _set(round=""), ("round",)),
    ("player-65", _seat0(player="P" * 65), ("seats", 0, "player")),
    ("line-feed-in-round", _set(round="20261204\n000137"), ("round",)),
    ("line-feed-after-table", _set(table="S01\n"), ("table",)),
    ("tab-in-player", _seat0(player="P\t1"), ("seats", 0, "player")),
    ("c1-in-dealer", _set(dealer="D\x8544"), ("dealer",)),
    ("del-in-round", _set(round="R\x7f"), ("round",)),
    ("nul-in-decision", _seat0(decision="fold\x00"), ("seats", 0, "decision")),
    ("nul-in-paid-key", _paid0(**{"a\x00": "1"}), ("seats", 0, "paid", "a\\x00")),
]


@pytest.mark.parametrize(
    "change,path", [case[1:] for case in INVALID], ids=[case[0] for case in INVALID]
)
def test_a_record_that_is_not_a_round_is_400_naming_the_field_and_kept(table_client, change, path):
    client = table_client("S01", "se-50kr")
    data = record()
    change(data)
    body = encoded(data)

    response = post_raw(client, body)

    assert response.status_code == 400, response.json()
    answer = response.json()
    assert answer["code"] == "invalid" and answer["request_id"] == response["X-Request-ID"]
    error_at(answer["errors"], *path)
    assert not Round.objects.exists()
    kept = Submission.objects.get()
    assert (kept.outcome, kept.http_status, kept.round_id) == ("rejected", 400, None)
    assert bytes(kept.body) == body
    assert kept.errors == answer["errors"]
    claimed = data.get("round")
    readable = claimed.replace("\x00", "\\x00")[:64] if isinstance(claimed, str) else ""
    assert kept.claimed_round == readable


@pytest.mark.parametrize(
    "body,path",
    [
        (b'{"table": "S01", ', ("body",)),
        (b"", ("body",)),
        (b"\xff\xfe not utf-8", ("body",)),
        (b'{"table": NaN}', ("body",)),
        (b"[1, 2]", ("non_field_errors",)),
        (b'"a round"', ("non_field_errors",)),
        (b"null", ("non_field_errors",)),
    ],
    ids=["truncated", "empty", "not-utf8", "nan", "list", "string", "null"],
)
def test_a_body_that_is_not_a_json_object_is_400_and_kept(table_client, body, path):
    client = table_client("S01", "se-50kr")
    response = post_raw(client, body)
    assert response.status_code == 400
    error_at(response.json()["errors"], *path)
    kept = Submission.objects.get()
    assert (kept.outcome, kept.http_status, bytes(kept.body)) == ("rejected", 400, body)


def test_a_body_over_the_upload_limit_is_413_and_its_refusal_kept(table_client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096
    client = table_client("S01", "se-50kr")
    response = client.post(ROUNDS, record(padding="x" * 5000), format="json")
    assert response.status_code == 413
    assert response.json()["code"] == "body_too_large"
    error_at(response.json()["errors"], "body")
    kept = Submission.objects.get()
    assert (kept.outcome, kept.http_status) == ("rejected", 413)
    # Under the limit the same table posts as usual.
    assert client.post(ROUNDS, record(), format="json").status_code == 201


# ---- rounds that break a rule: stored, settled, flagged -----------------------------


def _codes(answer: dict) -> set[str]:
    return {f["code"] for f in answer["findings"]}


def _duplicate_card(data):
    data["seats"][0]["hole"] = ["2c", "6d"]  # 2c is on the board


def _off_unit(data):
    data["seats"][0].update(ante="125", blind="125", paid={"ante": "-125", "blind": "-125"})


def _above_maximum(data):
    data["seats"][0].update(ante="1050", blind="1050", paid={"ante": "-1050", "blind": "-1050"})


def _play_not_its_multiple(data):
    data["seats"][1]["play"] = "300"  # preflop_4x on an Ante of 100
    data["seats"][1]["paid"]["play"] = "-300"


def _one_player_two_seats(data):
    data["seats"][1]["player"] = data["seats"][0]["player"]


FLAGGED = [
    ("duplicate-card", _duplicate_card, "duplicate_card"),
    ("off-unit", _off_unit, "bet_off_unit"),
    ("above-maximum", _above_maximum, "bet_above_maximum"),
    ("play-mismatch", _play_not_its_multiple, "play_mismatch"),
    ("player-two-seats", _one_player_two_seats, "player_multiple_hands"),
]


@pytest.mark.parametrize(
    "change,code", [case[1:] for case in FLAGGED], ids=[case[0] for case in FLAGGED]
)
def test_a_round_that_breaks_a_rule_is_stored_and_flagged(table_client, change, code):
    client = table_client("S01", "se-50kr")
    data = record()
    change(data)
    response = client.post(ROUNDS, data, format="json")
    assert response.status_code == 201, response.json()
    answer = response.json()
    assert answer["status"] == "flagged"
    assert code in _codes(answer)
    stored = Round.objects.get()
    assert stored.status == "flagged"
    assert code in set(stored.findings.values_list("code", flat=True))
    assert Submission.objects.get().outcome == "accepted"


def test_a_void_round_needs_no_cards_nor_paid(table_client):
    client = table_client("U01", "us-30k")
    data = us_record(void=True)
    for name in ("board", "dealer_cards"):
        del data[name]
    for seat_ in data["seats"]:
        del seat_["hole"], seat_["paid"]
    response = client.post(ROUNDS, data, format="json")
    assert response.status_code == 201, response.json()
    answer = response.json()
    assert answer["status"] == "void" and answer["void"] is True
    assert answer["board"] is None and answer["dealer_hand"] is None
    for seat_ in answer["seats"]:
        assert set(seat_["settled"].values()) == {"0.00"}
        assert seat_["paid"] is None
    # A void round moves no meter.
    assert answer["progressive"]["events"] == []
    assert Pool.objects.get(code="us-progressive").meter == Decimal("10000.00")


def test_a_round_without_paid_is_only_settled(table_client):
    client = table_client("S01", "se-50kr")
    data = record()
    for seat_ in data["seats"]:
        del seat_["paid"]
    response = client.post(ROUNDS, data, format="json")
    assert response.status_code == 201
    answer = response.json()
    assert answer["status"] == "settled"
    assert answer["seats"][1]["settled"] == {
        "ante": "-100.00", "blind": "-100.00", "play": "-400.00",
        "trips": "0.00", "progressive": "0.00",
    }


# ---- the answer's shape ------------------------------------------------------------


def test_the_answer_has_every_field_the_contract_names(table_client):
    client = table_client("U01", "us-30k")
    data = us_record()
    data["seats"][2]["paid"]["blind"] = "25"  # the dealer paid a losing Blind

    answer = client.post(ROUNDS, data, format="json").json()

    assert {"table", "round", "status", "dealer_hand", "dealer_qualifies", "seats", "progressive",
            "findings"} <= set(answer)
    assert (answer["table"], answer["round"], answer["status"]) == ("U01", "U-1", "flagged")
    assert (answer["dealer_hand"], answer["dealer_qualifies"]) == ("pair", True)
    assert [s["seat"] for s in answer["seats"]] == [1, 2, 3, 4]
    for seat_ in answer["seats"]:
        assert {"seat", "hand", "settled"} <= set(seat_)
        assert set(seat_["settled"]) == {"ante", "blind", "play", "trips", "progressive"}
    assert answer["seats"][3]["hand"] == "pair"
    assert answer["seats"][0]["settled"]["progressive"] == "-5.00"

    progressive = answer["progressive"]
    assert (progressive["pool"], progressive["meter_after"]) == ("us-progressive", "10004.00")
    assert [(e["kind"], e["seat"], e["amount"], e["meter"]) for e in progressive["events"]] == [
        # highest seat first, like the awards (ROUND_RECORD.md)
        ("contribution", 5 - n, "1.00", f"1000{n}.00") for n in (1, 2, 3, 4)
    ]

    [finding] = answer["findings"]
    assert {"code", "seat", "bet", "expected", "claimed", "detail"} <= set(finding)
    assert (finding["code"], finding["seat"], finding["bet"]) == ("payout_mismatch", 3, "blind")
    assert Decimal(finding["expected"]) == Decimal("-25")
    assert Decimal(finding["claimed"]) == Decimal("25")
    assert finding["detail"]


def test_a_table_without_a_pool_answers_progressive_null(table_client):
    answer = table_client("S01", "se-50kr").post(ROUNDS, record(), format="json").json()
    assert answer["progressive"] is None
    assert answer["findings"] == []


def test_findings_that_do_not_apply_are_null(table_client):
    client = table_client("S01", "se-50kr")
    data = record(seats=[seat(1, ["5c", "6d"]), seat(2, ["Ac", "Qd"], player="P-0001")])
    answer = client.post(ROUNDS, data, format="json").json()
    [finding] = [f for f in answer["findings"] if f["code"] == "player_multiple_hands"]
    assert finding["bet"] is None and finding["expected"] is None and finding["claimed"] is None


# ---- nothing is lost ----------------------------------------------------------------


def test_every_body_an_authenticated_table_sends_is_kept(table_client):
    table_client("S02", "se-50kr")
    client = table_client("S01", "se-50kr")
    sent = [
        (encoded(record("R-1")), 201),
        (encoded(record("R-1")), 200),
        (encoded(record("R-1", dealer="D9999")), 409),
        (b"{not json", 400),
        (encoded(record("R-2", dealt_at="yesterday")), 400),
        (encoded(record("R-3", table="S02")), 403),
        (encoded(record("R-4", seats=[seat(1, ["2c", "3c"])])), 201),  # a duplicated card: flagged
        (encoded(record("R-4")), 409),
    ]
    for body, status in sent:
        assert post_raw(client, body).status_code == status, body
    # A request without a key is nobody's: it is refused before anything is kept.
    assert post_raw(APIClient(), encoded(record("R-5"))).status_code == 401

    kept = list(Submission.objects.order_by("pk"))
    assert len(kept) == len(sent)
    assert [bytes(s.body) for s in kept] == [body for body, _ in sent]
    assert [s.http_status for s in kept] == [status for _, status in sent]
    assert [s.outcome for s in kept] == [
        "accepted", "replayed", "conflict", "rejected",
        "rejected", "forbidden", "accepted", "conflict",
    ]
    assert Round.objects.count() == 2
