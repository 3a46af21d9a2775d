"""The auditors' pages in the admin: reconciliation reports, the variance tests and their
findings, game protection's findings. The audit log's own pages, and the read-only admin every
kept record shares, are the trail's (trail/admin.py)."""

from . import admin_counts, admin_protection, admin_reports, admin_variance  # noqa: F401  (each registers its models)
