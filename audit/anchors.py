"""The chain's anchor: its head written, signed, to a place outside the database, and read back.

Whoever can write the database can edit an event and rehash every event
after it, and the chain verifies again; or cut its last events off and move
the head back. What catches both is an event's (seq, hash) kept where that
person cannot write: ``verify_audit --expect-file`` checks the chain still
holds it. So every gaming day, after its reconciliation, ``anchor_write``
sends the head out (``AUDIT_ANCHOR_PATH``: a line appended to
``anchors.jsonl`` there; ``AUDIT_ANCHOR_URL``: an HTTP POST of the same
JSON), and then records that it did as an event of the chain, which names
the event it anchored: the anchor itself is never the head it names.
That event also keeps where each pool's ledger stood (its last event and
the meter, overflow and reserve after it): once the next anchor holds it,
``verify_audit`` walks each ledger from there, not from its first event.

A line is signed with HMAC-SHA256 under ``AUDIT_ANCHOR_KEY`` over its
canonical JSON, so an anchor file that was edited, or had a line added by
someone without the key, is refused when it is read. The key is not kept in
the database: someone who holds both the database and the key can forge
anchors, so keep the key where the database's owner is not (a secret store
read by the service only).

One line of ``anchors.jsonl``::

    {"at": "2026-12-02T07:00:00.123456+00:00", "gaming_day": "2026-12-01",
     "hash": "…64 hex…", "seq": 81234, "signature": "hmac-sha256:…64 hex…"}

The signature is ``HMAC-SHA256(key, json.dumps({at, gaming_day, hash, seq},
sort_keys=True, separators=(",", ":")))`` in hex.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from progressive.selectors import ledger_positions
from trail.models import AuditEvent
from trail.selectors import anchor_latest, audit_chain_verify
from trail.services import SYSTEM, Actor, audit_record

from .anchor_post import anchor_post
from .reconciliation.config import day_to_reconcile

log = logging.getLogger(__name__)

ANCHOR_FILE = "anchors.jsonl"
SIGNATURE_PREFIX = "hmac-sha256:"
SIGNED_FIELDS = ("at", "gaming_day", "hash", "seq")
_HASH = re.compile(r"[0-9a-f]{64}")


class AnchorRefused(Exception):
    """An anchor (or an anchor file) that cannot be believed, or cannot be written."""


@dataclass(frozen=True, slots=True)
class Anchor:
    seq: int
    hash: str
    gaming_day: date
    at: datetime
    signed: bool = True

    def fields(self) -> dict:
        return {"at": self.at.isoformat(timespec="microseconds"), "gaming_day": self.gaming_day.isoformat(),
                "hash": self.hash, "seq": self.seq}


def anchor_signature(fields: dict, *, key: str) -> str:
    message = json.dumps({name: fields[name] for name in SIGNED_FIELDS}, sort_keys=True, separators=(",", ":"))
    return SIGNATURE_PREFIX + hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()


def anchor_line(anchor: Anchor, *, key: str) -> str:
    """The anchor as one JSON line, signed when there is a key (``signature`` null when not)."""
    fields = anchor.fields()
    fields["signature"] = anchor_signature(fields, key=key) if key else None
    return json.dumps(fields, sort_keys=True)


def anchor_parse(line: str, *, key: str, unsigned_allowed: bool) -> Anchor:
    """One line read back, its signature checked; ``AnchorRefused`` says why it is not believed."""
    try:
        fields = json.loads(line)
        seq, hash_, signature = fields["seq"], fields["hash"], fields["signature"]
        gaming_day, at = date.fromisoformat(fields["gaming_day"]), datetime.fromisoformat(fields["at"])
    except (ValueError, KeyError, TypeError) as error:
        raise AnchorRefused(f"not an anchor: {error}") from None
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0 or not isinstance(hash_, str) \
            or not _HASH.fullmatch(hash_):
        raise AnchorRefused("not an anchor: seq or hash malformed")
    if signature is None:
        if key or not unsigned_allowed:
            # With a key in force an unsigned line is what someone without it would add.
            raise AnchorRefused(f"anchor {seq} is unsigned")
        return Anchor(seq, hash_, gaming_day, at, signed=False)
    if not key:
        raise AnchorRefused(f"anchor {seq} is signed, and AUDIT_ANCHOR_KEY is not set to check it")
    if not isinstance(signature, str) or not hmac.compare_digest(signature, anchor_signature(fields, key=key)):
        raise AnchorRefused(f"anchor {seq}: the signature does not match (a forged or edited anchor)")
    return Anchor(seq, hash_, gaming_day, at)


def anchors_read(path: str | os.PathLike, *, key: str | None = None) -> list[Anchor]:
    """Every anchor of a file (or of ``anchors.jsonl`` in a directory), each checked, in file order.

    One line that is not believed refuses the whole file: its other lines
    come from the same place, and whoever could edit one could edit them all.
    """
    key = settings.AUDIT_ANCHOR_KEY if key is None else key
    path = Path(path)
    if path.is_dir():
        path = path / ANCHOR_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise AnchorRefused(f"cannot read {path}: {error.strerror or error}") from None
    anchors = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            anchors.append(anchor_parse(line, key=key, unsigned_allowed=not settings.PRODUCTION))
        except AnchorRefused as refused:
            raise AnchorRefused(f"{path}, line {number}: {refused}") from None
    if not anchors:
        raise AnchorRefused(f"{path} holds no anchor")
    return anchors


def anchors_earlier() -> list[Anchor]:
    """Every anchor written before, which a new one must not contradict.

    The file under ``AUDIT_ANCHOR_PATH`` is read back (its signatures
    checked: a refused file refuses the new anchor too); the anchors sent
    only to ``AUDIT_ANCHOR_URL`` are known here by the chain's own
    ``audit.anchored`` events. Those events are no proof against whoever
    rewrote the chain (they are rewritten with it), but they are what an
    earlier run said it sent: a chain that no longer holds what it recorded
    sending is refused as well.
    """
    found: dict[tuple[int, str], Anchor] = {}
    if settings.AUDIT_ANCHOR_PATH and (Path(settings.AUDIT_ANCHOR_PATH) / ANCHOR_FILE).exists():
        for anchor in anchors_read(settings.AUDIT_ANCHOR_PATH):
            found[(anchor.seq, anchor.hash)] = anchor
    recorded = AuditEvent.objects.filter(action="audit.anchored").values_list("after", flat=True)
    for after in recorded.iterator(chunk_size=1000):
        try:
            anchor = Anchor(int(after["seq"]), str(after["hash"]), date.fromisoformat(after["gaming_day"]),
                            datetime.fromisoformat(after["at"]), signed=bool(after.get("signed")))
        except (KeyError, TypeError, ValueError):
            continue  # an event edited out of shape is the chain walk's to name
        found.setdefault((anchor.seq, anchor.hash), anchor)
    return sorted(found.values(), key=lambda a: (a.seq, a.hash))


@dataclass(frozen=True, slots=True)
class AnchorWritten:
    anchor: Anchor
    line: str
    written_to: tuple[str, ...]


def anchor_write(*, gaming_day: date | None = None, actor: Actor = SYSTEM) -> AnchorWritten:
    """Verify the chain, send its head out to every place configured, then record that in the chain.

    The head is anchored only once the walk has proved it, every earlier
    anchor held (``anchors_earlier``): an anchor of a chain already broken,
    or rewritten since the last anchor, would vouch for the rewrite, and
    from then on the latest anchor would hold. It is sent before the
    event that records the sending is written, so a failure to record still
    leaves a good anchor, and a failure to send records nothing.
    """
    key = settings.AUDIT_ANCHOR_KEY
    # The settings' names, not their values: a URL may carry a token.
    places = [name for name in ("AUDIT_ANCHOR_PATH", "AUDIT_ANCHOR_URL") if getattr(settings, name)]
    if not places:
        raise ImproperlyConfigured("set AUDIT_ANCHOR_PATH or AUDIT_ANCHOR_URL: the anchor has nowhere to go")
    if not key:
        if settings.PRODUCTION:
            raise ImproperlyConfigured("AUDIT_ANCHOR_KEY must be set in production: anchors are never unsigned")
        log.warning("AUDIT_ANCHOR_KEY is not set: the anchor is written unsigned, and proves nothing "
                    "against anyone who can write where it goes")
    try:
        verified = _head_to_anchor()
    except AnchorRefused as refused:
        # A failed nightly task is retried and forgotten; a chain that no longer holds
        # its earlier anchors is what an auditor must hear of the same night.
        log.error("ALERT: no anchor written: %s", refused)
        raise
    if gaming_day is None:
        gaming_day = day_to_reconcile()
    anchor = Anchor(verified.last_seq, verified.last_hash, gaming_day, timezone.now(), signed=bool(key))
    # Where each pool's ledger stands, kept in the chain the next anchor pins: a later proof walks on from it.
    ledger = ledger_positions()
    line = anchor_line(anchor, key=key)
    if settings.AUDIT_ANCHOR_PATH:
        _append(Path(settings.AUDIT_ANCHOR_PATH), line)
    if settings.AUDIT_ANCHOR_URL:
        anchor_post(settings.AUDIT_ANCHOR_URL, line.encode())
    with transaction.atomic():
        audit_record(actor=actor, action="audit.anchored", object_type="audit.chain", object_id=str(anchor.seq),
                     object_repr=f"anchor {anchor.seq}:{anchor.hash[:12]}… of {gaming_day}",
                     after={**anchor.fields(), "signed": bool(key), "written_to": places, "ledger": ledger})
    return AnchorWritten(anchor, line, tuple(places))


def ledger_positions_anchored(*, at_or_before: int) -> dict[str, dict]:
    """The pools' ledger positions an anchor recorded, from the last ``audit.anchored`` event at or before
    event ``at_or_before`` (an anchored event: its content is as good as the anchor that holds it); {} when
    none kept them (an anchor made before they were kept)."""
    after = (AuditEvent.objects.filter(action="audit.anchored", seq__lte=at_or_before)
             .order_by("-seq").values_list("after", flat=True).first())
    ledger = (after or {}).get("ledger") if isinstance(after, dict) else None
    return ledger if isinstance(ledger, dict) else {}


def _head_to_anchor():
    """The chain walked since the latest anchor and every earlier anchor held by it; ``AnchorRefused``
    names what is not. The events before the latest anchor were walked when it was written."""
    earlier = [(a.seq, a.hash) for a in anchors_earlier()]
    verified = audit_chain_verify(anchors=earlier, since=anchor_latest(earlier))
    if not verified.ok:
        more = f"; {len(verified.breaks) - 1} more" if len(verified.breaks) > 1 else ""
        raise AnchorRefused(f"the audit chain is broken at event {verified.break_seq} ({verified.problem}{more}): "
                            "no anchor is written for it")
    return verified


def _append(directory: Path, line: str) -> None:
    """Append and fsync: a line the call returned on is on the disk."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ANCHOR_FILE, "a", encoding="utf-8") as file:
        file.write(line + "\n")
        file.flush()
        os.fsync(file.fileno())
