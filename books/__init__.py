"""The books' arithmetic, in plain Python: a group's sums and the figures derived from them, the
report's declared shape and its reader, the theoretical bands and the regulators' variance tests,
the statistics beneath them (the seat covariance, Trips' joint distribution) and a dealer's stints.

Below the apps and above the game: it imports nothing of the project but ``game`` and itself, and
no Django (tests/test_import_layers.py holds it to that).
"""
