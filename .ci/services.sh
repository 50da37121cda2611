# shellcheck shell=bash
# Sourced by .ci/run before the tests: provide a PostgreSQL server on loopback for the explore tests
# (tests/test_explore_*.py, marker `postgres`) and export WARPGRAPH_TEST_PG_URL.
# Idempotent (a running server on the port is reused); works as root in a fresh Debian 12 container
# (installs the `postgresql` package from the Debian mirror if no server binaries are present).
# Exports WARPGRAPH_TEST_PG_REQUIRED=1: the PostgreSQL tests then FAIL (not skip) without a server. If the server
# cannot be installed or started, sourcing returns 1 (so `.ci/run`, under `set -e`, stops): CI never passes with
# the PostgreSQL tests silently skipped. Set WARPGRAPH_PG_OPTIONAL=1 to only warn instead (local use).

_wg_pg_setup() {
    local port="${WARPGRAPH_PG_PORT:-55432}"
    local data="${WARPGRAPH_PG_DATA:-/var/tmp/warpgraph-pg/data}"
    local log="${data%/*}/server.log"
    local db=warpgraph_test user=warpgraph pass=warpgraph
    local bindir=""

    _wg_pg_bindir() {
        local d
        for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
            if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then echo "$d"; return 0; fi
        done
        return 1
    }

    bindir="$(_wg_pg_bindir)" || bindir=""
    if [ -z "$bindir" ]; then
        echo "services.sh: installing PostgreSQL (apt-get install postgresql)" >&2
        if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
               DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null; }; then
            echo "services.sh: WARNING: could not install postgresql; PostgreSQL tests cannot run" >&2
            return 1
        fi
        bindir="$(_wg_pg_bindir)" || { echo "services.sh: WARNING: no PostgreSQL binaries after install" >&2; return 1; }
    fi

    # the server refuses to run as root: run it as the `postgres` user (created by the package) if we are root
    local asuser=()
    if [ "$(id -u)" = 0 ]; then
        if ! id postgres >/dev/null 2>&1; then
            useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres 2>/dev/null || true
        fi
        if command -v runuser >/dev/null 2>&1; then asuser=(runuser -u postgres --); else asuser=(su postgres -s /bin/sh -c); fi
    fi
    _wg_as() {  # run a command as the server's user
        if [ ${#asuser[@]} -eq 0 ]; then "$@";
        elif [ "${asuser[0]}" = runuser ]; then "${asuser[@]}" "$@";
        else su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; fi
    }

    if "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" 2>/dev/null; then
        :  # already running (idempotent)
    else
        mkdir -p "${data%/*}"
        [ "$(id -u)" = 0 ] && chown postgres: "${data%/*}"
        if [ ! -s "$data/PG_VERSION" ]; then
            _wg_as "$bindir/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null ||
                { echo "services.sh: WARNING: initdb failed; PostgreSQL tests cannot run" >&2; return 1; }
        fi
        # unix socket inside the data dir's parent: no dependency on /var/run/postgresql
        _wg_as "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 \
            -o "-h 127.0.0.1 -p $port -k ${data%/*} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
            start >/dev/null ||
            { echo "services.sh: WARNING: PostgreSQL did not start (see $log); tests cannot run" >&2; return 1; }
    fi

    local psql=("$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA)
    if [ "$("${psql[@]}" -c "select 1 from pg_roles where rolname='$user'")" != 1 ]; then
        "${psql[@]}" -c "create role $user login password '$pass'" >/dev/null || return 1
    fi
    if [ "$("${psql[@]}" -c "select 1 from pg_database where datname='$db'")" != 1 ]; then
        "${psql[@]}" -c "create database $db owner $user" >/dev/null || return 1
    fi
    export WARPGRAPH_TEST_PG_URL="postgresql://$user:$pass@127.0.0.1:$port/$db"
    echo "services.sh: PostgreSQL ready: $WARPGRAPH_TEST_PG_URL" >&2
}

export WARPGRAPH_TEST_PG_REQUIRED=1
if _wg_pg_setup; then
    _wg_pg_rc=0
else
    _wg_pg_rc=1
    echo "services.sh: ERROR: no PostgreSQL server; the PostgreSQL tests would fail" >&2
    if [ "${WARPGRAPH_PG_OPTIONAL:-0}" = 1 ]; then unset WARPGRAPH_TEST_PG_REQUIRED; _wg_pg_rc=0; fi
fi
unset -f _wg_pg_setup _wg_pg_bindir _wg_as 2>/dev/null || true
return "$_wg_pg_rc" 2>/dev/null || exit "$_wg_pg_rc"
