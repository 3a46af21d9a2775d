"""Game protection in the service: every seat scored, and what many seats show together.

``game.protection`` holds the mathematics (no Django). Here it meets the
stored rounds:

- ``scores.table_day_score``: a table's gaming day, each round judged again
  as stored and each seat scored (``audit.SeatScore``), with the dealer-error
  fingerprints of its payout mismatches; the table's paid amounts tested
  against its pay tables (``pay_table_mismatch``);
- ``raising.day_findings_raise``: the information-leak test of every player
  who played that day over his recent history (``suspected_hole_carding``,
  ``suspected_collusion``) and the sweetheart test of every dealer
  (``suspected_sweetheart_dealing``);
- ``services.day_protect``: both for a day, in this process (``manage.py
  reconcile``); ``audit.tasks.protect_day`` fans the tables out to workers.

Every finding is a ``ProtectionFinding`` with a key that names exactly what
it is about, so a day scored again finds the findings it raised and keeps them.
"""
