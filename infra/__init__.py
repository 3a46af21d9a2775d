"""Shared infrastructure every app stands on: SQL and row helpers, row locks, partitions, the
gaming day's clock, money columns and immutable records, the API's shared shapes.

It imports no app of the project (tests/test_import_layers.py holds it to that).
"""
