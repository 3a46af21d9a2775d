"""A finding's state held to the audit events that moved it.

An auditor's move of a finding (``finding_transition``) writes the state,
who and the note on the row and a ``finding.<state>`` event in the chain, in
one transaction. The row's columns are left open to the service, so whoever
can write the database can dismiss a finding with a note and a colleague's
name and no event. Every worked state is the last event's: a finding whose
state, note or name differs from its last event, one moved from open with
no event at all, and one the chain saw worked whose row is gone are named.
Which findings a round has is the stored round's derivation (the engine,
``audit.reconciliation.reverify``); this is only their work.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Q

from audit.models import ProtectionFinding, VarianceFinding
from infra.work import UNTOUCHED, State, WorkedFinding
from rounds.models import Finding
from trail.models import AuditEvent

# Every finding an auditor works, each moved only through infra.work's transition and its event.
WORKED: tuple[type[WorkedFinding], ...] = (Finding, VarianceFinding, ProtectionFinding)


@dataclass(frozen=True, slots=True)
class FindingDifference:
    finding_pk: int
    round_pk: int | None
    column: str  # "state", "state_note", "state_changed_by_name", or "row" for a finding gone
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
    worked = worked_findings(model, pks=list(last)).values_list(
        "pk", round_of or "pk", "state", "state_note", "state_changed_by_name")
    seen = set()
    for pk, round_pk, state, note, name in worked.iterator(chunk_size=2000):
        round_pk = round_pk if round_of else None
        seen.add(pk)
        move = last.get(pk)
        if move is None:
            yield FindingDifference(pk, round_pk, "state", state, None, model.work_name)
            continue
        for column, stored, recorded in (("state", state, move[0]), ("state_note", note, move[1]),
                                         ("state_changed_by_name", name, move[2])):
            if stored != recorded:
                yield FindingDifference(pk, round_pk, column, stored, recorded, model.work_name)
    for pk in sorted(set(last) - seen):
        yield FindingDifference(pk, None, "row", None, last[pk][0], model.work_name)


def worked_findings(model: type[WorkedFinding], *, pks: list[int]):
    """The findings that look worked, and those ``pks`` (the chain saw worked), in key order: read by
    the worked index (``infra.work.worked_index``), never the findings nobody touched."""
    return model.objects.filter(~UNTOUCHED | Q(pk__in=pks)).order_by("pk")


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
