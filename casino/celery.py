"""The Celery application: configuration comes from Django settings (CELERY_*).

Without ``CELERY_BROKER_URL`` every task runs inline in the caller's process
(casino.settings). Two more knobs come straight from the environment, for
deployments (and tests) that share a broker:

- ``CELERY_TASK_DEFAULT_QUEUE``: the queue tasks are sent to and a worker
  started without ``-Q`` consumes (default ``celery``);
- ``CELERY_VISIBILITY_TIMEOUT``: seconds before Redis hands an unacknowledged
  message (its worker died) to another worker (default 3600). Keep it longer
  than the longest task and the longest countdown a retry waits, or a slow
  task runs twice. A report's work a dead worker held is not left to it: the
  watch (``audit.reconcile_watch``) sends it again once its lease runs out.
  RabbitMQ, the documented broker, gives a dead worker's messages back as soon
  as its connection drops.
"""

import os

from celery import Celery
from celery.signals import beat_init, setup_logging, worker_init

from game.evaluator import fill_rank_table

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")

app = Celery("casino")
app.config_from_object("django.conf:settings", namespace="CELERY")
if os.environ.get("CELERY_TASK_DEFAULT_QUEUE"):
    app.conf.task_default_queue = os.environ["CELERY_TASK_DEFAULT_QUEUE"]
app.conf.broker_transport_options = {
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600")),
}
app.autodiscover_tasks()


@worker_init.connect
def _tables_before_forking(**kwargs) -> None:
    """The hand evaluator's rank table, filled in the worker's parent before it forks its
    pool, so that every child re-verifies at full speed from its first round."""
    fill_rank_table()


@worker_init.connect
@beat_init.connect
def _never_as_the_owner(**kwargs) -> None:
    """In production a worker or beat on a role that owns the tables does not start (Celery
    logs and passes over a receiver's exception, not a SystemExit)."""
    from django.core.exceptions import ImproperlyConfigured

    from trail.privileges import refuse_the_owner

    try:
        refuse_the_owner()
    except ImproperlyConfigured as error:
        raise SystemExit(f"table-audit: {error}") from error


@setup_logging.connect
def _logging_as_the_web_logs(**kwargs) -> None:
    """The worker's and beat's lines as the web's: Django's LOGGING (casino.settings; JSON in
    production, with the same fields), not a format of Celery's own. Connected, Celery
    configures no logging of its own."""
