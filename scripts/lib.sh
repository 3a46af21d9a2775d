# Shared by scripts/serve and scripts/test: a Python >= 3.12 and the project's venv.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"

find_python() {
    local candidate
    for candidate in "${PYTHON:-}" python3.13 python3.12 python3 \
        "$HOME"/.pyenv/versions/3.13*/bin/python3 "$HOME"/.pyenv/versions/3.12*/bin/python3 \
        /usr/local/bin/python3.13 /usr/local/bin/python3.12; do
        [ -n "$candidate" ] || continue
        if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
            command -v "$candidate" 2>/dev/null || echo "$candidate"
            return 0
        fi
    done
    echo "table-audit needs Python 3.12 or newer (set PYTHON=/path/to/python3.12)" >&2
    return 1
}

ensure_venv() {  # ensure_venv REQUIREMENTS_FILE
    local requirements="$1" stamp="$VENV/.installed-$(basename "$1")"
    if [ ! -x "$VENV/bin/python" ]; then
        "$(find_python)" -m venv "$VENV"
    fi
    # Reinstall only when a requirements file changed since the last install.
    if [ ! -f "$stamp" ] || [ -n "$(find "$ROOT/requirements" -newer "$stamp" -name '*.txt')" ]; then
        echo "installing requirements/$(basename "$requirements") into .venv (a minute or two the first time)" >&2
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
        touch "$stamp"
    fi
}

pg_up() {  # start the local PostgreSQL on 5432 if it is down
    if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
        echo "starting PostgreSQL" >&2
        pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start
        for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && return 0; sleep 1; done
        echo "PostgreSQL did not come up on 127.0.0.1:5432" >&2
        return 1
    fi
}

redis_up() {  # start the local Redis on 6379 if it is down
    if ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
        echo "starting Redis" >&2
        mkdir -p /var/lib/redis /var/log/redis
        redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
            --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
        for _ in $(seq 1 30); do (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null && return 0; sleep 1; done
        echo "Redis did not come up on 127.0.0.1:6379" >&2
        return 1
    fi
}

rabbitmq_up() {  # start the local RabbitMQ on 5672 if it is down (the nightly job's fault tests use both brokers)
    if ! (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null; then
        echo "starting RabbitMQ" >&2
        if ! command -v rabbitmq-server >/dev/null 2>&1; then
            apt-get update -q >/dev/null
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q rabbitmq-server >/dev/null
        fi
        (rabbitmq-server >/var/log/rabbitmq-ci.log 2>&1 &)
        for _ in $(seq 1 60); do (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null && return 0; sleep 1; done
        echo "RabbitMQ did not come up on 127.0.0.1:5672" >&2
        return 1
    fi
}

browser_up() {  # headless Chromium from Debian's packages, for the end-to-end admin test
    if ! command -v chromium >/dev/null 2>&1; then
        echo "installing Chromium (Debian package) for the browser test" >&2
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
    fi
}

nginx_installed() {  # nginx from Debian's packages, started by tests/deploy in front of gunicorn
    if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
        echo "installing nginx (Debian package nginx-light) for the production-setup tests" >&2
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >/dev/null
    fi
}

directory_installed() {  # slapd for the sign-in tests, and what python-ldap builds against (Debian's packages)
    if ! command -v slapd >/dev/null 2>&1 && [ ! -x /usr/sbin/slapd ] || [ ! -f /usr/include/ldap.h ] \
        || [ ! -f /usr/include/sasl/sasl.h ]; then
        echo "installing slapd and the LDAP headers (Debian packages) for the directory sign-in tests" >&2
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q slapd ldap-utils libldap2-dev libsasl2-dev >/dev/null
    fi
}
