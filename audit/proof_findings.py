"""A finding's state held to the audit events that moved it.

An auditor's move of a finding (``finding_transition``) writes the state,
who and the note on the row and a ``finding.<state>`` event in the chain, in
one transaction. The row's columns are left open to the service, so whoever
can write the database can dismiss a finding with a note and a colleague's
name and no event. Every worked state is the last event's: a finding whose
state, note or name differs from its last event, one moved from open with
no event at all, and one the chain saw worked whose row is gone are named;
so is a case (assignee, priority, due time, escalation) that is not what its
last ``case`` or ``escalated`` event made it, or that no event made.
Which findings a round has is the stored round's derivation (the engine,
``audit.reconciliation.reverify``); this is only their work.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from audit.models import ProtectionFinding, VarianceFinding
from infra.work import CASE_COLUMNS, UNTOUCHED, Priority, State, WorkedFinding
from rounds.models import Finding
from rounds.services.cases import CASE_ACTIONS, case_of
from trail.models import AuditEvent

# The case of a finding nobody made a case of, as ``case_of`` says it.
UNWORKED_CASE = {"assignee": "", "priority": Priority.NORMAL.label, "due": "", "escalated": ""}
# Every finding an auditor works, each moved only through infra.work's transition and its event.
WORKED: tuple[type[WorkedFinding], ...] = (Finding, VarianceFinding, ProtectionFinding)


@dataclass(frozen=True, slots=True)
class FindingDifference:
    finding_pk: int
    round_pk: int | None
    column: str  # "state", "state_note", "state_changed_by_name", "case", or "row" for a finding gone
    stored: object
    recorded: object  # what the last event says; None: no event
    kind: str = Finding.work_name  # the finding's model, as its audit events name it

    def __str__(self) -> str:
        where = (f"{self.kind.replace('_', ' ')} #{self.finding_pk}"
                 + (f" of round #{self.round_pk}" if self.round_pk else ""))
        if self.column == "row":
            return f"{where}: the chain saw it worked ({self.recorded}), and it is gone"
        said = "no audit event moved it" if self.recorded is None else f"its last audit event says {self.recorded!r}"
        return f"{where}: {self.column} stored {self.stored!r}, {said}"


def finding_states_unrecorded() -> Iterator[FindingDifference]:
    """Every finding (of rounds, of the variance tests, of game protection) whose worked state is
    not what its last audit event made it."""
    for model in WORKED:
        yield from _unrecorded(model)


def _unrecorded(model: type[WorkedFinding]) -> Iterator[FindingDifference]:
    last = _last_moves(model)
    # Only a round's finding names its round; the others stand alone.
    round_of = Finding._meta.get_field("round").attname if model is Finding else None
    cases = _last_cases(model)
    worked = worked_findings(model, pks=[*last, *cases]).only(
        "pk", *(["round"] if round_of else []), "state", "state_changed_at", "state_note", "state_changed_by_name",
        *CASE_COLUMNS)
    seen = set()
    for finding in worked.iterator(chunk_size=2000):
        pk, state = finding.pk, finding.state
        round_pk = getattr(finding, round_of) if round_of else None
        seen.add(pk)
        case, recorded_case = case_of(finding), cases.get(pk)
        if not _same_case(case, recorded_case or UNWORKED_CASE):
            yield FindingDifference(pk, round_pk, "case", case, recorded_case, model.work_name)
        move = last.get(pk)
        if move is None:
            if (state != State.OPEN or finding.state_changed_at is not None or finding.state_note
                    or finding.state_changed_by_name):
                yield FindingDifference(pk, round_pk, "state", state, None, model.work_name)
            continue
        for column, stored, recorded in (("state", state, move[0]), ("state_note", finding.state_note, move[1]),
                                         ("state_changed_by_name", finding.state_changed_by_name, move[2])):
            if stored != recorded:
                yield FindingDifference(pk, round_pk, column, stored, recorded, model.work_name)
    for pk in sorted((set(last) | set(cases)) - seen):
        yield FindingDifference(pk, None, "row", None, last[pk][0] if pk in last else cases[pk], model.work_name)


def worked_findings(model: type[WorkedFinding], *, pks: list[int]):
    """The findings that look worked, and those ``pks`` (the chain saw worked), in key order: read by
    the worked index (``infra.work.worked_index``), never the findings nobody touched."""
    return model.objects.filter(~UNTOUCHED | Q(pk__in=pks)).order_by("pk")


def _same_case(stored: dict, recorded: dict) -> bool:
    """The row's case is what the event recorded: the same person and priority, the same instants
    (an event may have written a moment in another zone than UTC)."""
    return all(_instant(stored[key]) == _instant(recorded.get(key, "")) if key in ("due", "escalated")
               else stored[key] == recorded.get(key, "") for key in stored)


def _instant(text) -> datetime | str:
    try:
        return datetime.fromisoformat(text) if text else ""
    except (TypeError, ValueError):
        return str(text)


def _last_cases(model: type[WorkedFinding]) -> dict[int, dict]:
    """Each finding's case as its last ``case`` or ``escalated`` event left it: one read."""
    events = (
        AuditEvent.objects.filter(object_type=model._meta.label_lower,
                                  action__in=[f"{model.work_name}.{action}" for action in CASE_ACTIONS])
        .order_by("seq").values_list("object_id", "after")
    )
    cases = {}
    for object_id, after in events.iterator(chunk_size=2000):
        if object_id.isdigit() and isinstance(after, dict):
            cases[int(object_id)] = {key: after.get(key, "") for key in UNWORKED_CASE}
    return cases


def _last_moves(model: type[WorkedFinding]) -> dict[int, tuple[str, str, str]]:
    """(state, note, who) of each finding's last move, as the chain recorded it: one read."""
    events = (
        AuditEvent.objects.filter(object_type=model._meta.label_lower, action__startswith=f"{model.work_name}.")
        .order_by("seq").values_list("object_id", "action", "after", "actor_name")
    )
    moves = {}
    for object_id, action, after, actor_name in events.iterator(chunk_size=2000):
        state = action.removeprefix(f"{model.work_name}.")
        if not object_id.isdigit() or state not in State.values:
            continue
        after = after if isinstance(after, dict) else {}
        moves[int(object_id)] = (after.get("state", state), after.get("note", ""), actor_name)
    return moves
