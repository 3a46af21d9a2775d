"""deploy/systemd: the units an operator installs for the web service, the Celery worker and beat.

Where ``systemd-analyze`` is installed, each unit is verified by it (with the checkout in
place of /opt/table-audit, since it checks that every command exists) and its sandbox is
scored offline. Everywhere, the units are read line by line and held to what the rest of
the repository says: the commands in the venv, the settings' writable directory, the bind
of gunicorn.conf.py and the upstream of deploy/nginx/table-audit.conf.
"""

from __future__ import annotations

import re
import runpy
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy" / "systemd"
NGINX_SITE = ROOT / "deploy" / "nginx" / "table-audit.conf"
INSTALLED_AT = "/opt/table-audit"
ENVIRONMENT_FILE = "/etc/table-audit/env"
TARGET = "table-audit.target"
# Each service, the venv command it runs and the arguments it gives it (README, "Production").
SERVICES = {
    "table-audit-web.service": ("gunicorn", ["-c", "gunicorn.conf.py", "casino.wsgi"]),
    "table-audit-worker.service": ("celery", ["-A", "casino", "worker", "--loglevel", "INFO"]),
    "table-audit-beat.service": ("celery", ["-A", "casino", "beat", "--loglevel", "INFO"]),
}
ALL_UNITS = [*SERVICES, TARGET]
# The sandbox every service keeps.
HARDENING = {
    "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
    "PrivateDevices": "yes", "CapabilityBoundingSet": "", "RestrictSUIDSGID": "yes",
}
# systemd-analyze security's score, 0 (locked down) to 10 (none): systemd 252 gives each
# service 1.7, and the margin is for the checks later versions add.
EXPOSURE_AT_MOST = 2.5


def unit(name: str) -> dict[str, dict[str, list[str]]]:
    """A unit file as {section: {key: [every value given, in order]}}."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    for number, line in enumerate((UNITS / name).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        assert not line.endswith("\\"), f"{name}:{number}: keep each setting on one line"
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        assert current is not None and "=" in line, f"{name}:{number}: not a setting: {line!r}"
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def one(sections: dict, section: str, key: str) -> str:
    values = sections.get(section, {}).get(key, [])
    assert len(values) == 1, f"[{section}] {key}= is given {len(values)} times, not once"
    return values[0]


def seconds(text: str) -> float:
    """A systemd time span ("40s", "10min", "1min 30s", "90") in seconds."""
    factors = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", text)
    assert parts and "".join(n + u for n, u in parts) == text.replace(" ", ""), text
    return sum(float(n) * factors[u] for n, u in parts)


def gunicorn_conf(monkeypatch) -> dict:
    """gunicorn.conf.py's values when the environment sets none of them."""
    for name in ("GUNICORN_BIND", "GUNICORN_TIMEOUT", "GUNICORN_LINGER_MS"):
        monkeypatch.delenv(name, raising=False)
    return runpy.run_path(str(ROOT / "gunicorn.conf.py"))


# ---- systemd's own checks ----------------------------------------------------------------


def systemd_analyze() -> str:
    binary = shutil.which("systemd-analyze")
    if binary is None:
        pytest.skip("systemd-analyze is not installed (Debian package systemd): "
                    "the units are only read line by line here")
    return binary


@pytest.fixture
def units_here(tmp_path) -> Path:
    """The units with this checkout where they say /opt/table-audit, so that every command they
    name exists."""
    for name in ALL_UNITS:
        (tmp_path / name).write_text((UNITS / name).read_text().replace(INSTALLED_AT, str(ROOT)))
    return tmp_path


def test_systemd_analyze_verifies_every_unit(units_here):
    binary = systemd_analyze()
    done = subprocess.run([binary, "verify", "--man=no", *(str(units_here / n) for n in ALL_UNITS)],
                          capture_output=True, text=True, timeout=60)
    # A misspelt key or a bad value is only a warning to systemd, and exits 0: any line about
    # one of these units fails the test too. (Lines about the host's own units are not ours.)
    ours = [line for line in (done.stdout + done.stderr).splitlines()
            if str(units_here) in line or any(name in line for name in ALL_UNITS)]
    assert done.returncode == 0 and not ours, "\n".join(ours) or done.stderr


@pytest.mark.parametrize("name", SERVICES)
def test_each_service_is_sandboxed(units_here, name):
    binary = systemd_analyze()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    found = re.match(r"systemd (\d+)", version)
    if not found or int(found[1]) < 250:
        pytest.skip("systemd-analyze security --offline needs systemd 250 or later, "
                    f"not {version[:20]!r}")
    done = subprocess.run(
        # The threshold is on systemd's scale of 0 to 100, ten times the score it prints.
        [binary, "security", "--offline=true", f"--threshold={EXPOSURE_AT_MOST * 10:.0f}",
         "--no-pager", str(units_here / name)],
        capture_output=True, text=True, timeout=60,
    )
    score = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout)
    assert done.returncode == 0 and score, done.stdout[-2000:] + done.stderr
    assert float(score[1]) <= EXPOSURE_AT_MOST


# ---- what the units say, against the rest of the repository ---------------------------------


@pytest.mark.parametrize("name", SERVICES)
def test_each_service_runs_its_command_from_the_venv(name):
    command, arguments = SERVICES[name]
    sections = unit(name)
    exec_start = one(sections, "Service", "ExecStart").split()
    assert exec_start == [f"{INSTALLED_AT}/.venv/bin/{command}", *arguments]
    assert one(sections, "Service", "WorkingDirectory") == INSTALLED_AT
    # The same layout in this checkout: the venv's command, and what it is given, exist.
    assert (ROOT / ".venv" / "bin" / command).is_file()
    venv_bin = str(ROOT / ".venv" / "bin")
    assert shutil.which(command, path=venv_bin), f".venv/bin/{command} is not executable"
    if command == "gunicorn":
        assert (ROOT / "gunicorn.conf.py").is_file() and (ROOT / "casino" / "wsgi.py").is_file()
    else:
        assert (ROOT / "casino" / "celery.py").is_file()


@pytest.mark.parametrize("name", SERVICES)
def test_each_service_runs_as_its_own_user_from_the_environment_file(name):
    sections = unit(name)
    assert one(sections, "Service", "User") == "table-audit"
    assert one(sections, "Service", "Group") == "table-audit"
    # Without a leading "-": a missing file stops the unit from starting.
    assert one(sections, "Service", "EnvironmentFile") == ENVIRONMENT_FILE
    assert one(sections, "Service", "Environment") == "DJANGO_ENV=production"
    assert one(sections, "Service", "Restart") == "on-failure"
    assert one(sections, "Unit", "PartOf") == TARGET
    assert one(sections, "Install", "WantedBy") == TARGET
    for key, value in HARDENING.items():
        assert one(sections, "Service", key) == value, key


@pytest.mark.parametrize("name", SERVICES)
def test_each_service_may_write_only_where_the_settings_write(name):
    sections = unit(name)
    here = {"ReadWritePaths": settings.VAR_DIR, "ReadOnlyPaths": settings.STATIC_ROOT}
    for key, directory in here.items():
        path = one(sections, "Service", key)
        assert path.startswith(INSTALLED_AT + "/"), path
        assert ROOT / path.removeprefix(INSTALLED_AT + "/") == Path(directory), (key, directory)


def test_the_web_service_listens_where_nginx_sends(monkeypatch):
    bind = gunicorn_conf(monkeypatch)["bind"]
    upstream = re.search(r"upstream table_audit \{[^}]*?\bserver (\S+);", NGINX_SITE.read_text())
    assert upstream, f"{NGINX_SITE} has no upstream table_audit with a server"
    assert bind == upstream[1] == "127.0.0.1:8001"
    # Neither the unit nor the example environment moves gunicorn elsewhere.
    sections = unit("table-audit-web.service")
    environment = sections["Service"].get("Environment", [])
    assert not any(value.startswith("GUNICORN_BIND=") for value in environment)
    example = dict(line.split("=", 1) for line in (UNITS / "env.example").read_text().splitlines()
                   if line and not line.startswith("#"))
    assert example.get("GUNICORN_BIND", bind) == bind


def test_the_web_service_stops_and_reloads_as_gunicorn_does(monkeypatch):
    conf = gunicorn_conf(monkeypatch)
    sections = unit("table-audit-web.service")
    # gunicorn says when it is ready (sd_notify from its master).
    assert one(sections, "Service", "Type") == "notify"
    assert one(sections, "Service", "NotifyAccess") == "main"
    # SIGTERM to the master alone, which gives its workers graceful_timeout to finish; systemd
    # kills what is left only after that.
    assert one(sections, "Service", "KillMode") == "mixed"
    assert one(sections, "Service", "KillSignal") == "SIGTERM"
    assert conf["graceful_timeout"] < seconds(one(sections, "Service", "TimeoutStopSec"))
    assert one(sections, "Service", "ExecReload") == "/bin/kill -s HUP $MAINPID"


def test_the_worker_finishes_its_tasks_before_it_is_killed():
    sections = unit("table-audit-worker.service")
    # Celery's warm shutdown, which its main process leads.
    assert one(sections, "Service", "KillMode") == "mixed"
    assert one(sections, "Service", "KillSignal") == "SIGTERM"
    assert seconds(one(sections, "Service", "TimeoutStopSec")) >= 5 * 60


def test_the_target_never_starts_a_beat_the_machine_did_not_enable():
    """Exactly one beat per casino: the target wants only what each machine enabled."""
    sections = unit(TARGET)
    assert not {"Wants", "Requires", "BindsTo", "Upholds"} & set(sections.get("Unit", {}))
    assert one(sections, "Install", "WantedBy") == "multi-user.target"
    assert not any(key != "WantedBy" for key in unit("table-audit-beat.service").get("Install", {}))


def test_the_example_environment_is_what_production_needs():
    lines = [line for line in (UNITS / "env.example").read_text().splitlines()
             if line and not line.startswith("#")]
    # Nothing a shell would read otherwise than systemd: no spaces, quotes or "$".
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*=[^\s'\"$]*", line) for line in lines), lines
    example = dict(line.split("=", 1) for line in lines)
    assert example["DJANGO_ENV"] == "production"
    needed = ("SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "CELERY_BROKER_URL", "TRUSTED_PROXIES")
    for name in needed:
        assert example.get(name), name
    assert example["DATABASE_URL"].startswith("postgres://")
