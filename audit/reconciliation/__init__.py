"""Nightly reconciliation: a gaming day's figures, checked against the game's mathematics.

``config`` reads the clock and the statistical parameters from settings;
``figures`` adds up and derives (pure); ``selectors`` reads the database with
aggregation and streaming; ``reverify`` judges stored rounds again;
``services`` writes reports and their parts. Celery tasks (``audit.tasks``)
and the ``reconcile`` command only call the services.
"""
