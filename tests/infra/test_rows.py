"""infra.rows.new_row builds the very instance Model.__init__ builds."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from infra.rows import new_row
from progressive.models import MeterEvent
from rounds.models import Finding, Round, Seat, Submission, Table


def _columns(row) -> dict:
    return {f.attname: getattr(row, f.attname) for f in type(row)._meta.concrete_fields}


@pytest.mark.parametrize("model, values", [
    (Seat, {"round": Round(pk=7, gaming_day=date(2026, 11, 30)), "gaming_day": date(2026, 11, 30), "seat": 3,
            "ante": Decimal("100"), "hand": "pair", "paid_reported": True}),
    (Finding, {"round": Round(pk=7), "code": "payout_mismatch", "seat": 2, "expected": Decimal("5")}),
    (Submission, {"table": Table(pk=3, code="S01"), "body": b"{}", "outcome": "accepted", "http_status": 201,
                  "round": None}),
    (MeterEvent, {"pool_id": 1, "seq": 4, "kind": "contribution", "amount": Decimal("1.00"), "round_id": 9}),
    # received_at given: its default is the moment, which two builds never share.
    (Round, {"pk": 11, "table": Table(pk=3, code="S01"), "round_id": "R-1", "status": "verified",
             "received_at": datetime(2026, 11, 30, 21, 0, tzinfo=UTC)}),
])
def test_a_new_row_is_what_the_model_would_build(model, values):
    fast, slow = new_row(model, **values), model(**values)
    assert _columns(fast) == _columns(slow)
    assert fast._state.adding and fast._state.db is None
    for name, value in values.items():
        if isinstance(value, (Round, Table)):
            assert getattr(fast, name) is value  # the related object is cached, not fetched


def test_an_unknown_field_is_refused_as_the_model_would():
    with pytest.raises(TypeError, match="colour"):
        new_row(Seat, colour="red")



def test_a_default_is_the_fields_own_and_a_callable_one_is_made_for_each_row():
    from audit.models import ReconciliationReport

    finding = new_row(Finding, code="a")
    assert finding.state == Finding.State.OPEN and finding.informational is False and finding.bet == ""
    first, second = new_row(ReconciliationReport), new_row(ReconciliationReport)
    assert first.inputs == {} and first.inputs is not second.inputs  # default=dict: one each
