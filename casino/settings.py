"""Settings from the environment, with an embedded default for development.

Without any environment the service runs on a SQLite file with Celery tasks
inline. Production (``DJANGO_ENV=production``) refuses to start without a real
secret and turns on every secure-transport setting; see README, "Production".
"""

from __future__ import annotations

import os
import sys
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from infra.process_names import of_command_line

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_amounts(name: str, default: str) -> dict[str, Decimal]:
    """``"SEK=100000,USD=10000"`` as ``{"SEK": Decimal("100000"), …}``."""
    amounts = {}
    for item in env_list(name, default):
        currency, _, amount = item.partition("=")
        try:
            amounts[currency.strip().upper()] = Decimal(amount.strip())
        except InvalidOperation:
            raise ImproperlyConfigured(f"{name}: {item!r} is not CURRENCY=AMOUNT") from None
    return amounts


def env_date(name: str) -> date | None:
    """An ISO date (``2026-01-01``), or None when unset; anything else stops the start with the name."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ImproperlyConfigured(f"{name}: {text!r} is not a date (YYYY-MM-DD)") from None


def env_fraction(name: str, default: str) -> float:
    """A chance strictly between 0 and 1, e.g. ``0.001``; anything else stops the start with the name."""
    text = os.environ.get(name, default)
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise ImproperlyConfigured(f"{name}: {text!r} is not a number between 0 and 1")
    return value


def env_positive_int(name: str, default: str) -> int:
    """A whole number above zero; anything else stops the start with the name."""
    text = os.environ.get(name, default)
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ImproperlyConfigured(f"{name}: {text!r} is not a whole number above zero")
    return value


PRODUCTION = os.environ.get("DJANGO_ENV", "development") == "production"

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY must be set in production")
    SECRET_KEY = "insecure-development-key-never-used-in-production"

DEBUG = env_bool("DEBUG", not PRODUCTION)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "" if PRODUCTION else "localhost,127.0.0.1,[::1],testserver")

INSTALLED_APPS = [
    # django.contrib.admin, with the service's name on it (casino/admin_site.py).
    "casino.apps.CasinoAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp_webauthn",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "django_celery_results",
    "axes",
    "trail",
    "audit",
    "progressive",
    "rounds",
    # Last: the project shell, which stands on every app above.
    "casino",
]

MIDDLEWARE = [
    # First: /healthz, /readyz and /metrics answered before any redirect, host check or session.
    "casino.health.ProbesMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "casino.middleware.RequestIdMiddleware",
    # The request being served, for every log line written meanwhile (casino.logs).
    "casino.logs.RequestLogContextMiddleware",
    # Marks a table's post of rounds, for which the people's middleware below
    # (casino.middleware: Django's and django-axes' own, standing aside) does nothing.
    "casino.middleware.TableKeyOnAdminMiddleware",
    # Before anything reads the body (CSRF reads a form's): a chunked one made readable.
    "casino.middleware.ChunkedBodyMiddleware",
    "casino.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "casino.middleware.AuthenticationMiddleware",
    "casino.middleware.OTPMiddleware",
    "casino.middleware.MessageMiddleware",
    # After the person is known (the refusal is the admin's page, with his links).
    "casino.middleware.NulRefusedMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # The Content-Security-Policy header (SECURE_CSP, below) and each request's nonce.
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into a refusal page.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    # Counts failed logins (admin and API basic auth) and locks out after AXES_FAILURE_LIMIT.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Single sign-on against the casino's directory (LDAP; casino.directory): off unless DIRECTORY_URI
# names a server. People are looked up under DIRECTORY_PEOPLE by DIRECTORY_PERSON_FILTER, their
# groups (groupOfNames) under DIRECTORY_GROUPS; DIRECTORY_ROLE_GROUPS maps roles to group DNs
# ("auditor=cn=auditors,ou=groups,dc=casino;supervisor=cn=…"). Only the directory's groups give a
# person of the directory his roles: read again at each sign-in.
DIRECTORY_URI = os.environ.get("DIRECTORY_URI", "")
DIRECTORY_ROLE_GROUPS: dict[str, str] = {}
if DIRECTORY_URI:
    from casino.directory_settings import BACKEND, directory_settings

    globals().update(directory_settings(
        uri=DIRECTORY_URI, people=os.environ["DIRECTORY_PEOPLE"], groups=os.environ["DIRECTORY_GROUPS"],
        role_groups_text=os.environ.get("DIRECTORY_ROLE_GROUPS", ""),
        bind_dn=os.environ.get("DIRECTORY_BIND_DN", ""), bind_password=os.environ.get("DIRECTORY_BIND_PASSWORD", ""),
        person_filter=os.environ.get("DIRECTORY_PERSON_FILTER", "(uid=%(user)s)"),
        start_tls=env_bool("DIRECTORY_START_TLS", False),
    ))
    AUTHENTICATION_BACKENDS.insert(1, BACKEND)
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("LOGIN_COOLOFF_HOURS", "1"))
# Lock the username from that address: a guesser elsewhere cannot lock a real auditor out.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# The reverse proxies in front of the service (addresses or networks, comma
# separated): behind them a request's address is the client's from
# X-Forwarded-For, never the proxy's, so a lockout keys on who really tried.
TRUSTED_PROXIES = [p.strip() for p in os.environ.get("TRUSTED_PROXIES", "").split(",") if p.strip()]
AXES_CLIENT_IP_CALLABLE = "infra.client_address.client_address"

# Throttle counters live in the cache: set CACHE_URL=redis://… when several
# processes serve, so they share one budget per table and per person.
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": os.environ["CACHE_URL"],
         # A cache that does not answer is let through (api.throttling), after this long.
         "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}}
        if os.environ.get("CACHE_URL")
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    ),
    # The charts drawn once by their data (infra.charts.drawn_once), each web worker its own: apart
    # from the throttles' counters, which no chart may push out. A chart is some tens of kB.
    "charts": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "charts",
               "TIMEOUT": 24 * 3600, "OPTIONS": {"MAX_ENTRIES": int(os.environ.get("CHARTS_KEPT", "400"))}},
}

# A table key proven once is remembered by each web worker for this many
# seconds (api.authentication._ProvenKeys): a key revoked or a table
# deactivated stops working in every worker within this time. 0: never remembered.
TABLE_KEY_CACHE_SECONDS = float(os.environ.get("TABLE_KEY_CACHE_SECONDS", "5"))
# Wrong table keys one address may send in a minute; past it each further wrong key
# from there is a 429 until the minute ends, a right key still served (api.throttling);
# 0: never throttled. Each is logged and counted at /metrics either way.
TABLE_KEY_FAILURES_PER_MINUTE = int(os.environ.get("TABLE_KEY_FAILURES_PER_MINUTE", "30"))

ROOT_URLCONF = "casino.urls"
WSGI_APPLICATION = "casino.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "casino" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
            ],
        },
    },
]

# The embedded default is a SQLite file beside the code; production and the
# test suite point DATABASE_URL at PostgreSQL (psycopg 3).
VAR_DIR = BASE_DIR / "var"
VAR_DIR.mkdir(exist_ok=True)
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'table-audit.sqlite3'}",
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "0")),
    )
}
# Each process names its connections (the web, a worker, beat, a manage.py command): the
# database writes the name onto every audit event, so the trail tells which process wrote it.
PROCESS_NAME = of_command_line(sys.argv, under_tests="pytest" in sys.modules)
# PostgreSQL compiles a query whose estimated cost is high (JIT): on a busy day's findings
# the compiling took longer than the query, on every page view, since a pool's connection
# plans each statement anew. Off unless DB_JIT=1 (docs/SCALING.md). libpq reads PGOPTIONS only
# where no options are given, so an operator's are passed on after it (the last one of a
# setting wins).
SESSION_OPTIONS = " ".join(filter(None, ["" if env_bool("DB_JIT", False) else "-c jit=off",
                                    os.environ.get("PGOPTIONS", "").strip()]))
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("application_name", PROCESS_NAME)
    if SESSION_OPTIONS:
        DATABASES["default"]["OPTIONS"].setdefault("options", SESSION_OPTIONS)
    if env_bool("DB_POOL", False):
        # psycopg 3's pool inside each worker process; incompatible with CONN_MAX_AGE.
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        DATABASES["default"]["OPTIONS"]["pool"] = {
            "min_size": int(os.environ.get("DB_POOL_MIN", "2")),
            "max_size": int(os.environ.get("DB_POOL_MAX", "8")),
        }
# The role the application runs as, named where the owner runs `migrate`: it grants
# that role the application's privileges and nothing more (trail.privileges). The
# service itself logs in as that role; in production it refuses to run as one that
# could act as a table's owner.
DATABASE_APP_ROLE = os.environ.get("DATABASE_APP_ROLE", "")
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several tables post at once to the embedded default, each request on its
    # own connection to one file. In WAL mode readers and the one writer do not
    # wait for each other. Every transaction takes the write lock at its BEGIN
    # (IMMEDIATE), so a second writer queues there, in the busy timeout,
    # instead of failing at once when its read could not become a write; only
    # a writer that waits out the timeout is answered 503. synchronous stays
    # FULL, SQLite's default: a round answered is on disk, as on PostgreSQL.
    # A query on DATABASE_URL (?timeout=…) overrides each of these.
    _sqlite = DATABASES["default"].setdefault("OPTIONS", {})
    _sqlite.setdefault("transaction_mode", "IMMEDIATE")
    _sqlite.setdefault("timeout", 20)
    _sqlite.setdefault("init_command", "PRAGMA journal_mode=WAL")
# Streaming replicas of the PostgreSQL primary (comma separated URLs), aliases
# "replica", "replica_2", …: the staff's lists and details, the CSV exports and
# the nightly report's reads of rounds, seats and ledgers may be served there;
# every write stays on the primary (casino.routers, infra.replicas). A replica
# lagging more than REPLICA_MAX_LAG_SECONDS, down or not a standby is passed
# over for the primary; a verdict is kept REPLICA_CHECK_SECONDS. In tests each
# replica mirrors the test database.
DATABASE_REPLICAS = []
for _number, _url in enumerate(env_list("DATABASE_REPLICA_URL"), start=1):
    _replica = dj_database_url.parse(_url, conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "0")))
    if "postgresql" not in DATABASES["default"]["ENGINE"] or "postgresql" not in _replica["ENGINE"]:
        raise ImproperlyConfigured(
            "DATABASE_REPLICA_URL names streaming replicas of a PostgreSQL DATABASE_URL"
        )
    # A replica that cannot be reached is passed over in seconds, not a TCP timeout's minutes.
    _replica.setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", int(os.environ.get("REPLICA_CONNECT_TIMEOUT", "2"))
    )
    _replica["OPTIONS"].setdefault("application_name", PROCESS_NAME)
    if SESSION_OPTIONS:
        _replica["OPTIONS"].setdefault("options", SESSION_OPTIONS)
    _replica["TEST"] = {"MIRROR": "default"}
    _alias = "replica" if _number == 1 else f"replica_{_number}"
    DATABASES[_alias] = _replica
    DATABASE_REPLICAS.append(_alias)
if DATABASE_REPLICAS:
    DATABASE_ROUTERS = ["casino.routers.PrimaryReplicaRouter"]
REPLICA_MAX_LAG_SECONDS = float(os.environ.get("REPLICA_MAX_LAG_SECONDS", "5"))
REPLICA_CHECK_SECONDS = float(os.environ.get("REPLICA_CHECK_SECONDS", "2"))
# Storing a round commits without waiting for the disk, so the pool's and the
# audit chain's row locks go free at once, then waits for the disk before it
# answers: as durable as a synchronous commit, and the locks are no longer held
# through an fsync (docs/SCALING.md has the numbers). Off: plain synchronous commits.
INGEST_ASYNC_COMMIT = env_bool("INGEST_ASYNC_COMMIT", True)
# The statements every round runs are prepared once per database connection
# (infra/sql.py): planning them is most of what they cost PostgreSQL. Turn
# off behind a pooler that does not keep a session per connection (PgBouncer
# in transaction mode).
DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)
# Rounds posted to one web worker at the same moment share a transaction
# (rounds.services.combiner), so the pool's and the audit chain's locks
# are taken once for several tables instead of once each.
INGEST_COMBINE = env_bool("INGEST_COMBINE", True)

# Rounds and seats are partitioned by gaming day on PostgreSQL (rounds.partitions):
# a daily task keeps this many days' partitions made ahead of today's.
ROUND_PARTITIONS_AHEAD_DAYS = int(os.environ.get("ROUND_PARTITIONS_AHEAD_DAYS", "14"))

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The casino's locale for the admin's dates and numbers (Django 6 always formats
# by locale). British English by default, with casino/formats/en_GB making its
# times 24-hour: "1 Dec 2026, 19:40". Any language Django knows may be set
# ("sv": Swedish words and formats). The API's JSON and the CSV exports are
# never localized.
LANGUAGE_CODE = os.environ.get("LANGUAGE_CODE", "en-gb")
FORMAT_MODULE_PATH = ["casino.formats"]
USE_THOUSAND_SEPARATOR = env_bool("USE_THOUSAND_SEPARATOR", True)
TIME_ZONE = os.environ.get("TIME_ZONE", "Europe/Stockholm")
USE_I18N = True
USE_TZ = True

# A round belongs to the gaming day on which it was dealt, in the casino's
# time zone, where a day runs from the cut-off hour to the next one.
GAMING_DAY_TIME_ZONE = os.environ.get("GAMING_DAY_TIME_ZONE", TIME_ZONE)
GAMING_DAY_CUTOFF_HOUR = int(os.environ.get("GAMING_DAY_CUTOFF_HOUR", "6"))
# Shifts within the gaming day, each from its start to the next one's (named: "day=06:00,…").
GAMING_DAY_SHIFTS = os.environ.get("GAMING_DAY_SHIFTS", "06:00,14:00,22:00")
# The base game's house edge per Ante under optimal play and its standard
# deviation, for the theoretical win and its bands in the nightly report.
BASE_GAME_HOUSE_EDGE = os.environ.get("BASE_GAME_HOUSE_EDGE", "0.02185")
BASE_GAME_SD = os.environ.get("BASE_GAME_SD", "4.94")
# Healing reports (audit/reconciliation/healing.py). A part's claim not renewed for
# RECONCILIATION_LEASE_SECONDS belonged to a run that died: it is taken over (its holder
# renews it every quarter of that while it computes, however long the part takes).
RECONCILIATION_LEASE_SECONDS = int(os.environ.get("RECONCILIATION_LEASE_SECONDS", "60"))
# A task of a report retries a database error (a restart, a lost connection) with backoff
# for this long, then fails the report with the reason; a failed report is tried again
# after RECONCILIATION_RETRY_FIRST_SECONDS, doubling each failure up to ..._MOST_SECONDS.
RECONCILIATION_RETRY_SECONDS = int(os.environ.get("RECONCILIATION_RETRY_SECONDS", "900"))
RECONCILIATION_RETRY_FIRST_SECONDS = int(os.environ.get("RECONCILIATION_RETRY_FIRST_SECONDS", "60"))
RECONCILIATION_RETRY_MOST_SECONDS = int(os.environ.get("RECONCILIATION_RETRY_MOST_SECONDS", "3600"))
# A gaming day is reconciled by the healing job only this long after its cut-off: the
# night's last rounds arrive first, and the nightly entry (an hour after the cut-off) runs it.
RECONCILIATION_SETTLE_SECONDS = int(os.environ.get("RECONCILIATION_SETTLE_SECONDS", "3600"))
# Where each gaming day's chain head is written outside the database (audit/anchors.py):
# a directory (``anchors.jsonl`` appended there) and/or a URL POSTed to, signed under the key.
AUDIT_ANCHOR_PATH = os.environ.get("AUDIT_ANCHOR_PATH", "")
AUDIT_ANCHOR_URL = os.environ.get("AUDIT_ANCHOR_URL", "")
AUDIT_ANCHOR_KEY = os.environ.get("AUDIT_ANCHOR_KEY", "")

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
WHITENOISE_USE_FINDERS = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# A round of seven seats is about 3 KB; a batch of 1,000 fits well inside this.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("MAX_BODY_BYTES", str(8 * 1024 * 1024)))
# Every body a table sends is kept, and the contract lets tables add fields, so
# only size bounds what one table can make the service keep. A single round
# (one item of a batch) past this is refused 413, far above a real round of
# seven seats (about 2 KB) and far below the whole-request limit above.
ROUND_BODY_MAX_BYTES = int(os.environ.get("ROUND_BODY_MAX_BYTES", str(64 * 1024)))
# Of a body refused for its size, this many first bytes are kept with its size:
# enough for an auditor to see what it was, never its bulk.
ROUND_BODY_KEPT_BYTES = int(os.environ.get("ROUND_BODY_KEPT_BYTES", str(4 * 1024)))
# The bytes of kept bodies one table may add per hour (a sliding hour, in the
# cache beside the throttles); past it its posts are 429 with Retry-After. A
# gaming day of rounds sent at once fits several times over; the bound is what
# a table with a stolen key could make the service keep. 0: no budget.
TABLE_KEPT_BYTES_PER_HOUR = int(os.environ.get("TABLE_KEPT_BYTES_PER_HOUR", str(16 * 1024 * 1024)))

# A round dealt later than the moment the service received it, by more than
# this, is stored and flagged dealt_in_future (ROUND_RECORD.md; game.clock).
CLOCK_TOLERANCE = timedelta(seconds=int(os.environ.get("CLOCK_TOLERANCE_SECONDS", "600")))
# The window of gaming days the books accept (ROUND_RECORD.md, dealt_outside_window;
# rounds.window): from the first day of the earliest open month (the month of
# ROUND_WINDOW_OPENS when set, else the month before the database was created,
# and on past archived months) to ROUND_WINDOW_AHEAD_SECONDS after a round is received.
# A round outside is kept, flagged and held apart from the books until placed.
ROUND_WINDOW_OPENS = env_date("ROUND_WINDOW_OPENS")
ROUND_WINDOW_AHEAD = timedelta(seconds=int(os.environ.get("ROUND_WINDOW_AHEAD_SECONDS", "86400")))
# The tonight page names a table silent when this long passed between two of its rounds
# (or since its last one, on the current gaming day): a dealing table posts every minute
# or two, so a longer gap is a table that stopped posting, or stopped dealing.
TABLE_SILENT_AFTER = timedelta(minutes=int(os.environ.get("TABLE_SILENT_MINUTES", "20")))

# Game protection (audit.protection; docs/PROTECTION.md says what each means). The leak
# tests together suspect an honest player, ever over his whole history, with at most this
# chance (divided among them); the sweetheart test raises at this p-value, with at least
# this many errors for the player, looking back this many gaming days. A table's pay line
# differs when this many wins fit another multiple.
PROTECTION_LEAK_ALPHA = env_fraction("PROTECTION_LEAK_ALPHA", "0.001")
PROTECTION_PAY_TABLE_MIN_OBSERVATIONS = int(os.environ.get("PROTECTION_PAY_TABLE_MIN_OBSERVATIONS", "3"))
PROTECTION_SWEETHEART_P_VALUE = float(os.environ.get("PROTECTION_SWEETHEART_P_VALUE", "0.0001"))
PROTECTION_SWEETHEART_MIN_ERRORS = int(os.environ.get("PROTECTION_SWEETHEART_MIN_ERRORS", "3"))
PROTECTION_HISTORY_DAYS = int(os.environ.get("PROTECTION_HISTORY_DAYS", "90"))
# The table's days (the scored one and those before it, by the calendar) whose shown lines make the
# collusion test's line model (game.protection.lines): more rounds, a model nearer the table's play.
PROTECTION_LINE_DAYS = env_positive_int("PROTECTION_LINE_DAYS", "14")

# Dual control on the meter (progressive.services.meter_adjust): an adjustment
# larger than this, in the pool's currency, moves the meter only once a second
# supervisor approves it. "SEK=100000,USD=10000"; a currency not named here
# needs a second supervisor for every adjustment.
METER_SECOND_APPROVAL_ABOVE = env_amounts("METER_SECOND_APPROVAL_ABOVE", "SEK=100000,EUR=10000,USD=10000")
# What one supervisor moved alone on a pool over this many hours counts toward that
# amount, so that twelve small adjustments are judged as the one large one they make.
METER_SECOND_APPROVAL_WINDOW_HOURS = env_positive_int("METER_SECOND_APPROVAL_WINDOW_HOURS", "24")
# The window of dual control's independence (trail.approvals.approver_tie): a change of one
# person by the other, or of both by one person, within it ties them.
APPROVER_INDEPENDENCE_DAYS = env_positive_int("APPROVER_INDEPENDENCE_DAYS", "30")

# Mail: notices of what cannot wait (rounds.notices). The console in development (the mail is
# printed where the server runs); in production SMTP at EMAIL_HOST unless EMAIL_BACKEND says.
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend" if PRODUCTION else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", "10"))
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "table-audit@localhost")
EMAIL_SUBJECT_PREFIX = os.environ.get("EMAIL_SUBJECT_PREFIX", "[table-audit] ")
# Told of every notice besides the holders of rounds.receive_notices: "surveillance@casino.example".
NOTICES_TO = env_list("NOTICES_TO")
# A payout mismatch this large or larger, in its round's currency, is mailed at once; a
# currency not named here is never mailed for a mismatch (the morning's queue still has it).
NOTICE_MISMATCH_AT_LEAST = env_amounts("NOTICE_MISMATCH_AT_LEAST", "SEK=5000,EUR=500,USD=500")
# A table's first notice of a kind goes at once; what it finds of that kind within this many
# minutes after is held and then told in one notice naming every finding, so a table that
# overpays round after round cannot bury the supervisors' mail.
NOTICE_GROUP_WINDOW = timedelta(minutes=env_positive_int("NOTICE_GROUP_MINUTES", "10"))
# The most notices one address is mailed in an hour; past it only the first of a kind (a why)
# that hour still goes to it (the others are kept in the trail and on the pages, as every notice).
NOTICES_PER_RECIPIENT_HOUR = env_positive_int("NOTICES_PER_RECIPIENT_HOUR", "20")
# A table storing more rounds than this in an hour for days already ended is an alert (the
# tonight page, /metrics): each makes a reported day stale for the hourly healer to remake.
LATE_ROUNDS_ALERT_PER_HOUR = env_positive_int("LATE_ROUNDS_ALERT_PER_HOUR", "60")
# A gap between a dealer's rounds at his table longer than this is a break, ending his stint
# (books.stints): hands an hour count the time dealt, not the breaks.
STINT_BREAK = timedelta(minutes=env_positive_int("STINT_BREAK_MINUTES", "20"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # A person's session or password, each with the second factor he must prove (api.authentication).
        "api.authentication.ProvenSessionAuthentication",
        "api.authentication.SecondFactorBasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["infra.permissions.IsStaffReader"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # JSON only: every endpoint reads JSON, so the schema offers nothing else.
    "DEFAULT_PARSER_CLASSES": ["casino.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "casino.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.CursorPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "casino.operations.NamedOperations",
    "EXCEPTION_HANDLER": "casino.errors.api_exception_handler",
    "COERCE_DECIMAL_TO_STRING": True,
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_CLASSES": [
        "api.throttling.TableRateThrottle",
        "api.throttling.PersonRateThrottle",
        "api.throttling.AnonRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        # A table deals a round a minute; the budget leaves room for catching up.
        "table": os.environ.get("THROTTLE_TABLE", "3000/min"),
        "user": os.environ.get("THROTTLE_PERSON", "1200/min"),
        "anon": os.environ.get("THROTTLE_ANON", "60/min"),
    },
}

SPECTACULAR_SETTINGS = {
    "TITLE": "table-audit",
    "DESCRIPTION": (
        "Round verification for Ultimate Texas Hold'em tables: tables post each "
        "dealt round; the service settles it, verifies the dealer's payouts and "
        "keeps it for audit."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Operations are tagged and named in casino/operations.py; a table's engineer reads "table".
    "TAGS": [
        {"name": "table", "description": "What a table calls with its key: its rounds, one by one or "
                                         "in a batch, and its meter display's readings (ROUND_RECORD.md)."},
        {"name": "rounds", "description": "Stored rounds and their verdicts, for casino staff; voiding one."},
        {"name": "findings", "description": "What the service found wrong with rounds, and auditors' work on it."},
        {"name": "progressive", "description": "Progressive pools: versions, the meter's ledger, hits, readings "
                                               "and adjustments."},
        {"name": "reports", "description": "The nightly reconciliation's reports."},
        {"name": "protection", "description": "Game protection: scored decisions, players, and what "
                                              "many rounds show together (docs/PROTECTION.md)."},
        {"name": "exports", "description": "Rounds, findings and the audit log as CSV for a period."},
        {"name": "tokens", "description": "A person's own tokens for his scripts: made with his session or "
                                          "password, expiring, revocable, each in the audit log."},
    ],
    # The docs page loads Swagger UI from this server, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two models have a "status": name their choice sets after what they describe.
    "ENUM_NAME_OVERRIDES": {
        "RoundStatusEnum": "rounds.models.Round.Status",
        "ReportStatusEnum": "audit.models.ReconciliationReport.Status",
        "AdjustmentRequestStateEnum": "progressive.models.MeterAdjustmentRequest.State",
        "StateEnum": "infra.work.State",
    },
}

# /metrics (casino.metrics_endpoint): a Bearer token the scrape must carry, and/or
# the addresses or networks it must come from (comma separated); neither: loopback only.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
METRICS_ALLOWED = env_list("METRICS_ALLOWED")

# Celery: without a broker every task runs inline, in the caller's process.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = "django-db"
CELERY_RESULT_EXTENDED = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker or beat that loses the broker keeps trying, however long it is away, instead of
# exiting after a hundred tries (beat then records a night as sent that never was; the
# healing job makes it good once the broker is back).
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# A worker's remote-control queue is not exclusive to one broker connection. An exclusive one is
# refused (RabbitMQ's 405) to a worker that reconnects before the broker has dropped its lost
# connection, and the worker exits where it should go on working. Shared, it still goes away with
# its worker (auto-delete, expiring ten seconds after the last consumer).
CELERY_CONTROL_QUEUE_EXCLUSIVE = False
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = TIME_ZONE

# Log lines as JSON objects, one a line, each naming its request id, table and
# person (casino.logs), or as plain text for a person reading a terminal:
# LOG_FORMAT=json|plain, json in production, plain in development.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "json" if PRODUCTION else "plain")
if LOG_FORMAT not in {"json", "plain"}:
    raise ImproperlyConfigured("LOG_FORMAT is json or plain")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_context": {"()": "casino.logs.RequestContextFilter"},
                "refusals": {"()": "casino.logs.RefusalsWithoutTraceback"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "casino.logs.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT,
                             "filters": ["request_context", "refusals"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # Django's own records through the console above alone: its default "django" logger keeps a
    # handler of its own while DEBUG is on (the embedded default), which printed every refusal's
    # traceback again past the filter (tests/embedded/test_demo_on_sqlite.py).
    "loggers": {"django": {"handlers": [], "level": "INFO"}, "django.db.backends": {"level": "WARNING"}},
}

# Content Security Policy, in every environment, so that a page that needs more
# than this is found before production. Scripts come from this server only, or
# carry the request's nonce (the API docs' start-up script does:
# casino/templates/drf_spectacular/swagger_ui.html). Inline styles are allowed,
# as the admin's round cards use one and a style runs no code. Nothing may
# frame a page, load a plugin or post a form elsewhere.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
# A person's tokens for his scripts (api.tokens): the longest one may work, in days. Only a token's
# SHA-512 is kept (django-rest-knox); none is renewed by use.
STAFF_TOKEN_MOST_DAYS = env_positive_int("STAFF_TOKEN_MOST_DAYS", "90")
REST_KNOX = {"AUTO_REFRESH": False, "TOKEN_TTL": timedelta(days=STAFF_TOKEN_MOST_DAYS), "AUTH_HEADER_PREFIX": "Token"}
# The admin asks these roles (and every superuser) for an authenticator's code as well as the
# password (casino.second_factor): in production unless 0; the embedded demo asks only whoever
# has set one up, unless 1.
SECOND_FACTOR_REQUIRED = env_bool("SECOND_FACTOR_REQUIRED", PRODUCTION)
SECOND_FACTOR_ROLES = env_list("SECOND_FACTOR_ROLES", "supervisor,admin")
OTP_TOTP_ISSUER = "table-audit"
# Passkeys (casino.passkeys): the origins people open the admin at (scheme, host and port); the
# first one's host is the name passkeys are made for (a domain, or localhost: never an address).
PASSKEY_ORIGINS = env_list("PASSKEY_ORIGINS", "http://localhost:8000")
OTP_WEBAUTHN_ALLOWED_ORIGINS = PASSKEY_ORIGINS
OTP_WEBAUTHN_RP_ID = urlsplit(PASSKEY_ORIGINS[0]).hostname if PASSKEY_ORIGINS else ""
OTP_WEBAUTHN_RP_NAME = "table-audit"
OTP_WEBAUTHN_ALLOW_PASSWORDLESS_LOGIN = False  # a second factor, after the password, never instead of it
# A person's session ends after this many minutes without a request (each request moves its end
# on): a workstation left signed in at the pit is not left open for the shift.
SESSION_IDLE_MINUTES = env_positive_int("SESSION_IDLE_MINUTES", "30")
SESSION_COOKIE_AGE = SESSION_IDLE_MINUTES * 60
SESSION_SAVE_EVERY_REQUEST = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
