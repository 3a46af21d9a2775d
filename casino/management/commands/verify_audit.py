"""``python manage.py verify_audit``: prove every stored fact from what cannot be rewritten unseen.

It reports every kind of damage it finds in one run, each named, and exits 1
at the end if there was any (the last line counts them):

- the database's protections (PostgreSQL): every trigger protecting the
  records there and enabled (``trail.protections``);
- the audit chain: each event present, following the one before, its hash
  its own content's; the walk goes on past a break and names each one;
- anchors kept outside: ``--expect SEQ:HASH`` (an ``anchor`` line an
  earlier run printed), or ``--expect-file PATH``, the anchors
  ``audit_anchor`` and the nightly task wrote (``anchors.jsonl`` or its
  directory), each line's signature checked under ``AUDIT_ANCHOR_KEY``,
  and every one of them, not only the latest, still held by the chain;
- the kept bodies: each stored round's record, record hash and
  ``round.stored`` event what the body its table sent says
  (``rounds.proof``);
- the computed columns: each round's status, findings, settled amounts,
  meter events and meter after derived again from its record, its
  configuration version as the chain recorded it and its pool's ledger, and
  its paid amounts from the body (``audit.reconciliation.derived``): each
  difference named with its table, round, column, stored and derived value;
- the configuration versions: each version's numbers against what the chain
  recorded when it was made (``rounds.proof_versions``), and each pool version
  (``progressive.proof_versions``);
- the findings' work: each worked state, note and name against its last
  audit event (``audit.proof_findings``);
- people and privileges: each person against his last recorded state, each
  role's group against ``casino/roles.py`` (``casino.proof_people``); each
  person's tokens and authenticators against the events that made them
  (``casino.proof_sign_in``); each
  table's keys against the events that issued them (``rounds.proof_keys``);
  each count and correction against its event (``audit.proof_counts``); a round held apart from the books
  only if found outside the window and never placed (``rounds.proof_held``); each person's act
  written where he proved who he is (``trail.proof_origins``). These are
  ``trail.record_proofs``, the list the nightly report runs too;
- the pools: each pool's meter, overflow and reserve against its ledger,
  every event following the one before (``progressive.selectors``), from
  where the latest anchor's chain kept each ledger's position (its event
  still as kept); ``--full`` walks every event.

The walk starts at the latest anchor (given, or else the ones the nightly
task wrote, ``audit.anchors.anchors_earlier``), each anchor held to its
event, and the rounds read again are those stored since it: its time follows
what was written since, not the history. Each earlier round's body was read
again by its day's report. ``--full`` walks the chain from its first event
and reads every round again: the rare whole check, which also finds an edit
before the anchor that left every hash as it was.

``--chain-only`` checks the protections, the chain and its anchors alone.
"""

import re
from collections.abc import Callable, Iterable

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from audit.anchors import AnchorRefused, anchors_earlier, anchors_read, ledger_positions_anchored
from trail.protections import protections_missing
from trail.record_proofs import record_proofs
from trail.selectors import anchor_latest, audit_chain_verify

ANCHOR = re.compile(r"(?P<seq>[0-9]+):(?P<hash>[0-9a-f]{64})")


class Command(BaseCommand):
    help = "Verify the audit chain, its anchors, and every stored fact against what cannot be rewritten."

    def add_arguments(self, parser):
        parser.add_argument(
            "--expect", metavar="SEQ:HASH",
            help="an anchor kept outside the database: event SEQ must still have this hash",
        )
        parser.add_argument(
            "--expect-file", metavar="PATH",
            help="anchors written outside (anchors.jsonl, or its directory): signatures checked, each must hold",
        )
        parser.add_argument("--chain-only", action="store_true",
                            help="the protections, the chain and its anchors only: no round, version or finding")
        parser.add_argument("--full", action="store_true",
                            help="walk the chain from its first event and read every round again, "
                                 "not only what was written since the latest anchor")

    def handle(self, *args, expect=None, expect_file=None, chain_only=False, full=False, **options):
        if expect is not None and expect_file is not None:
            raise CommandError("--expect and --expect-file: give one anchor")
        damage: list[str] = []
        missing = protections_missing(connection)
        for protection in missing:
            self.stdout.write(f"protection gone: {protection}")
        if missing:
            damage.append(f"{len(missing)} of the database's protections are missing or disabled")
        anchors = self._anchors(expect, expect_file, damage)
        since = None if full else anchor_latest(anchors)
        self._chain(anchors, since, damage)
        if not chain_only:
            self._records(since, damage)
        if connection.vendor == "postgresql" and not missing:
            self.stdout.write("every protection of the records is in force")
        if damage:
            raise CommandError("; ".join(damage))

    def _anchors(self, expect: str | None, expect_file: str | None, damage: list[str]) -> list[tuple[int, str]]:
        if expect is not None:
            match = ANCHOR.fullmatch(expect.strip())
            if match is None:
                raise CommandError("--expect is SEQ:HASH, as the 'anchor' line of an earlier run prints it")
            return [(int(match["seq"]), match["hash"])]
        try:
            if expect_file is None:
                # Those the nightly task wrote: the file it keeps, and the chain's record of sending.
                return sorted({(a.seq, a.hash) for a in anchors_earlier()})
            anchors = anchors_read(expect_file)
        except AnchorRefused as refused:
            # The rest is still verified: a refused file must not hide a broken chain.
            self.stdout.write(f"anchor file refused: {refused}")
            damage.append(f"anchor file refused: {refused}")
            return []
        unsigned = [a.seq for a in anchors if not a.signed]
        if unsigned:
            self.stdout.write(f"{len(unsigned)} anchor(s) unsigned (AUDIT_ANCHOR_KEY not set), the latest "
                              f"{max(unsigned)} is unsigned: they prove nothing against whoever can write the file")
        return sorted({(a.seq, a.hash) for a in anchors})

    def _chain(self, anchors: list[tuple[int, str]], since: tuple[int, str] | None, damage: list[str]) -> None:
        result = audit_chain_verify(anchors=anchors, since=since)
        for broken in result.breaks:
            self.stdout.write(f"audit chain broken at event {broken.seq}: {broken.problem}")
        if not result.ok:
            more = f" and {len(result.breaks) - 1} more place(s)" if len(result.breaks) > 1 else ""
            damage.append(f"audit chain broken at event {result.break_seq}: {result.problem}{more} "
                          f"({result.checked} events walked)")
            return
        if since is None:
            self.stdout.write(f"audit chain intact: {result.checked} events")
        else:
            self.stdout.write(f"audit chain intact: {result.checked} events walked since anchor {since[0]}, "
                              f"which holds with every anchor before it (--full walks from the first event)")
        if len(anchors) > 1:
            self.stdout.write(f"all {len(anchors)} anchors hold")
        if anchors:
            self.stdout.write(f"anchor {anchors[-1][0]}:{anchors[-1][1]} holds")
        self.stdout.write(f"last hash: {result.last_hash}")
        self.stdout.write(f"anchor: {result.last_seq}:{result.last_hash}")

    def _records(self, since: tuple[int, str] | None, damage: list[str]) -> None:
        # Rounds, versions and pools stand above the audit log.
        from audit.reconciliation.derived import stored_columns_differences
        from progressive.models import Pool
        from progressive.selectors import pool_ledger_check_since
        from rounds.proof import bodies_differences, rounds_stored_after
        from rounds.proof_versions import config_versions_recorded

        recorded = config_versions_recorded()
        rounds = None if since is None else rounds_stored_after(since[0])
        if rounds is not None:
            self.stdout.write(f"{rounds.count()} round(s) stored since anchor {since[0]} read again "
                              "(--full reads every round)")
        self._each(damage, bodies_differences(rounds=rounds),
                   lambda d: f"round {d.round_id} (#{d.round_pk}): {d.problem}",
                   "differences between stored rounds and the bodies their tables sent",
                   "every stored round is what its kept body says")
        self._each(damage, stored_columns_differences(recorded=recorded, rounds=rounds), str,
                   "stored columns differ from what their rounds' bodies, versions and ledgers derive",
                   "every stored round's computed columns are what it derives")
        for proof in record_proofs():
            self._each(damage, proof.differences(), str, proof.differs, proof.holds)
        # From where the anchored chain says each ledger stood (the whole ledger with --full).
        positions = {} if since is None else ledger_positions_anchored(at_or_before=since[0])
        if positions:
            self.stdout.write(f"each pool's ledger walked from the position kept with anchor {since[0]} or "
                              "before it (--full walks every event)")
        checks = (pool_ledger_check_since(pool=p, position=positions.get(p.code))
                  for p in Pool.objects.order_by("code"))
        pools = (check for check in checks if not check.ok)
        self._each(damage, pools,
                   lambda c: f"pool {c.pool}: {c.problem}" + (f" (at event {c.seq})" if c.seq else ""),
                   "pools whose meter is not their ledger",
                   "every pool's meter is its ledger")

    def _each(self, damage: list[str], found: Iterable, line: Callable[[object], str], counted: str,
              clean: str) -> None:
        n = 0
        for item in found:
            n += 1
            self.stdout.write(line(item))
        if n:
            damage.append(f"{n} {counted}")
        else:
            self.stdout.write(clean)
