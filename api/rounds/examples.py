"""Real rounds and their real answers, as the API docs show them (docs/openapi.yaml).

The records are worked rounds of ../shared/examples (``c-se-01`` and
``c-se-11``, table S01 on the shipped configuration ``se-50kr``); each answer
is what the service answered when they were posted to a fresh database, in
this order: the first round (201), the same body again (200), the first
round's id with a changed body (409), the second round (201) and a body
without ``dealt_at`` and a seat's ``decision`` (400).
tests/api/test_docs_examples.py posts each one again and holds the service to
the answer written here, ids, request ids and clocks aside.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample

# ---- what a table posts -------------------------------------------------------------------

# c-se-01: the dealer does not qualify, the player wins with a straight; every payout right.
VERIFIED_RECORD = {
    "table": "S01",
    "round": "c-se-01",
    "dealt_at": "2026-11-28T20:00:00+01:00",
    "dealer": "D001",
    "void": False,
    "board": ["2c", "7d", "9h", "Ts", "Kd"],
    "dealer_cards": ["3h", "4s"],
    "seats": [{
        "seat": 3,
        "hole": ["8c", "Jd"],
        "ante": "100", "blind": "100", "trips": "50",
        "decision": "preflop_4x", "play": "400",
        "paid": {"ante": "0", "blind": "100", "play": "400", "trips": "200", "progressive": "0"},
    }],
}

# c-se-11: the dealer paid the flush's Blind 1:1 instead of 3:2.
FLAGGED_RECORD = {
    "table": "S01",
    "round": "c-se-11",
    "dealt_at": "2026-11-28T20:00:00+01:00",
    "dealer": "D001",
    "void": False,
    "board": ["2h", "7h", "9h", "Ts", "Kd"],
    "dealer_cards": ["Qc", "Qs"],
    "seats": [{
        "seat": 7,
        "hole": ["Ah", "3h"],
        "ante": "100", "blind": "100", "trips": "0",
        "decision": "preflop_4x", "play": "400",
        "paid": {"ante": "100", "blind": "100", "play": "400", "trips": "0", "progressive": "0"},
    }],
}

# c-se-01's round id again, with the Trips paid 150 instead of 200.
CONFLICTING_RECORD = {
    **VERIFIED_RECORD,
    "seats": [{**VERIFIED_RECORD["seats"][0],
               "paid": {**VERIFIED_RECORD["seats"][0]["paid"], "trips": "150"}}],
}

# Without dealt_at and the seat's decision: not a round record.
REFUSED_RECORD = {
    "table": "S01",
    "round": "c-se-99",
    "board": ["2c", "7d", "9h", "Ts", "Kd"],
    "dealer_cards": ["3h", "4s"],
    "seats": [{"seat": 3, "hole": ["8c", "Jd"], "ante": "100", "blind": "100", "play": "400"}],
}

# ---- what the service answered ------------------------------------------------------------

NO_PAYOUT = "0.00"

VERIFIED_ANSWER = {
    "id": 1,
    "table": "S01",
    "round": "c-se-01",
    "dealt_at": "2026-11-28T20:00:00+01:00",
    "gaming_day": "2026-11-28",
    "dealer": "D001",
    "void": False,
    "status": "verified",
    "board": ["2c", "7d", "9h", "Ts", "Kd"],
    "dealer_cards": ["3h", "4s"],
    "dealer_hand": "high_card",
    "dealer_qualifies": False,
    "config": {"name": "se-50kr", "version": 1},
    "seats": [{
        "seat": 3,
        "player": None,
        "hole": ["8c", "Jd"],
        "hand": "straight",
        "decision": "preflop_4x",
        "progressive_lit": False,
        "settled": {"ante": NO_PAYOUT, "blind": "100.00", "play": "400.00", "trips": "200.00",
                    "progressive": NO_PAYOUT},
        "paid": {"ante": NO_PAYOUT, "blind": "100.00", "play": "400.00", "trips": "200.00",
                 "progressive": NO_PAYOUT},
        "ante": "100.00", "blind": "100.00", "trips": "50.00", "play": "400.00", "progressive": NO_PAYOUT,
    }],
    "progressive": None,
    "findings": [],
    "received_at": "2026-12-01T19:57:52.196237+01:00",
}

CONFLICT_ANSWER = {
    "code": "conflicting_resubmission",
    "message": "Round c-se-01 was already stored with a different body; this one was kept and refused, "
               "and the stored round is flagged.",
    "request_id": "be2f2bd583c54292b86f14b6d0e5fe72",
    "round": {
        **VERIFIED_ANSWER,
        "status": "flagged",
        "findings": [{
            "id": 1,
            "code": "conflicting_resubmission",
            "seat": None,
            "bet": None,
            "expected": None,
            "claimed": None,
            "detail": "submission 3 sent a different body for this round id; it was refused and kept",
            "informational": False,
            "state": "open",
        }],
    },
}

FLAGGED_ANSWER = {
    "id": 2,
    "table": "S01",
    "round": "c-se-11",
    "dealt_at": "2026-11-28T20:00:00+01:00",
    "gaming_day": "2026-11-28",
    "dealer": "D001",
    "void": False,
    "status": "flagged",
    "board": ["2h", "7h", "9h", "Ts", "Kd"],
    "dealer_cards": ["Qc", "Qs"],
    "dealer_hand": "pair",
    "dealer_qualifies": True,
    "config": {"name": "se-50kr", "version": 1},
    "seats": [{
        "seat": 7,
        "player": None,
        "hole": ["Ah", "3h"],
        "hand": "flush",
        "decision": "preflop_4x",
        "progressive_lit": False,
        "settled": {"ante": "100.00", "blind": "150.00", "play": "400.00", "trips": NO_PAYOUT,
                    "progressive": NO_PAYOUT},
        "paid": {"ante": "100.00", "blind": "100.00", "play": "400.00", "trips": NO_PAYOUT,
                 "progressive": NO_PAYOUT},
        "ante": "100.00", "blind": "100.00", "trips": NO_PAYOUT, "play": "400.00", "progressive": NO_PAYOUT,
    }],
    "progressive": None,
    "findings": [{
        "id": 2,
        "code": "payout_mismatch",
        "seat": 7,
        "bet": "blind",
        "expected": "150.00",
        "claimed": "100.00",
        "detail": "the dealer settled blind at 100.00, the rules give 150.00",
        "informational": False,
        "state": "open",
    }],
    "received_at": "2026-12-01T19:57:56.308111+01:00",
}

REFUSED_ANSWER = {
    "code": "invalid",
    "message": "The body is not a valid round record; see errors.",
    "request_id": "44395b7a88f1459f9d12e3379cccaffc",
    "errors": {"dealt_at": ["This field is required."], "seats": {"0": {"decision": ["This field is required."]}}},
}

# A table catching up: each record answered in its place.
BATCH_RECORDS = {"rounds": [VERIFIED_RECORD, REFUSED_RECORD]}
BATCH_ANSWER = {"results": [{"status": 201, "body": VERIFIED_ANSWER}, {"status": 400, "body": REFUSED_ANSWER}]}


# ---- as the operations document them ------------------------------------------------------
# A request example and the answers to it share a name: tests/api/test_docs_examples.py
# posts each request and expects the answers of its name, in the order of their statuses'
# listing here.

POST_ROUND_EXAMPLES = [
    OpenApiExample("Verified", VERIFIED_RECORD, request_only=True,
                   summary="c-se-01: a straight beats a dealer who does not qualify; every payout right"),
    OpenApiExample("Conflicting", CONFLICTING_RECORD, request_only=True,
                   summary="c-se-01's round id again with another body (Trips paid 150): 409 once "
                           "c-se-01 is stored"),
    OpenApiExample("Flagged", FLAGGED_RECORD, request_only=True,
                   summary="c-se-11: the dealer paid the flush's Blind 1:1 instead of 3:2"),
    OpenApiExample("Verified", VERIFIED_ANSWER, response_only=True, status_codes=[201],
                   summary="c-se-01 stored and verified"),
    OpenApiExample("Verified", VERIFIED_ANSWER, response_only=True, status_codes=[200],
                   summary="c-se-01 posted again, identical: the stored round, counted once"),
    OpenApiExample("Conflicting", CONFLICT_ANSWER, response_only=True, status_codes=[409],
                   summary="Refused and kept; the stored round gains the finding conflicting_resubmission"),
    OpenApiExample("Flagged", FLAGGED_ANSWER, response_only=True, status_codes=[201],
                   summary="c-se-11 stored, flagged with payout_mismatch on seat 7's Blind"),
    OpenApiExample("Refused", REFUSED_ANSWER, response_only=True, status_codes=[400],
                   summary="A body without dealt_at and a seat's decision: refused (and kept), "
                           "each missing field named"),
]

POST_BATCH_EXAMPLES = [
    OpenApiExample("Batch", BATCH_RECORDS, request_only=True,
                   summary="c-se-01 and a record without dealt_at and a seat's decision"),
    OpenApiExample("Batch", BATCH_ANSWER, response_only=True, status_codes=[200],
                   summary="The first stored (201), the second refused (400), each in its place"),
]
