"""The HTTP API, thin views over the apps: the tables' (rounds and meter readings, with a
table's key), the pools' and the auditors' (reports, exports, game protection).

``authentication`` proves a table by its key and ``throttling`` holds tables, people and
strangers to their rates; ``rounds``, ``progressive`` and ``audit`` hold each app's views,
filters and serializers. Nothing of the apps imports this package (tests/test_import_layers.py).
"""
