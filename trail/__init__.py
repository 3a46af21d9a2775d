"""The audit trail: the append-only, hash-chained log every app writes, its walk, the
database's guards of the records, and dual control's decisions.

It stands below every app that writes it and imports none of them
(tests/test_import_layers.py holds it to that).
"""
