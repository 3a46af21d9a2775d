"""Migration 0009 turns stored rounds into partitioned ones without losing or changing any."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from bench.load import django_run

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="partitioning is PostgreSQL's")


def test_rounds_stored_before_partitioning_are_kept_in_their_months(empty_databases):
    held = json.loads(django_run(empty_databases().url, "-m", "tests.rounds.stored_before_partitioning",
                                 module=False, as_owner=True).strip().splitlines()[-1])

    assert held["rounds"] == [
        ["R-1", "2024-01-31", "rounds_round_p202401"],
        ["R-2", "2024-02-01", "rounds_round_p202402"],
        ["R-3", "2024-02-29", "rounds_round_p202402"],
    ]
    assert held["seats"] == [
        [r, str(s), d, f"rounds_seat_p{d[:4]}{d[5:7]}"]
        for r, d in (("R-1", "2024-01-31"), ("R-2", "2024-02-01"), ("R-3", "2024-02-29"))
        for s in (1, 2)
    ]
    assert held["keys"] == [["True", "R-1", "2024-01-31"], ["True", "R-2", "2024-02-01"],
                            ["True", "R-3", "2024-02-29"]]
    assert held["findings"] == [["3"]] and held["submissions"] == [["3"]]
    assert held["next_id_after_max"] == [["True"]]
    assert [name for (name,) in held["foreign_keys"]] == [
        "progressive_meterevent_round_key_fk", "rounds_finding_round_key_fk", "rounds_round_key_fk",
        "rounds_seat_round_fk", "rounds_submission_round_key_fk",
    ]
