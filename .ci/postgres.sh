#!/usr/bin/env bash
# A throwaway PostgreSQL for the sync tests: `start DIR [PORT]` makes a cluster in DIR (initdb,
# trust authentication on loopback only, run as the `postgres` user when this runs as root, since
# PostgreSQL refuses to run as root) and starts it on 127.0.0.1:PORT (default 55432), then prints
# the connection URL; `restart DIR` restarts it (fast: its connections are cut); `stop DIR`
# stops it and removes DIR. Installs Debian's postgresql when it is
# missing (apt-get, as root or with sudo). The server listens on no other address and no socket
# outside DIR.
set -euo pipefail
command=${1:-}
dir=${2:-}
port=${3:-55432}
if [ -z "$command" ] || [ -z "$dir" ]; then
  echo "usage: $0 start DIR [PORT] | restart DIR | stop DIR" >&2
  exit 64
fi

bindir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$found" ]; then
    local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >&2
    found=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
  echo "$found"
}

# Runs a PostgreSQL program as the user that owns the cluster.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$command" in
start)
  bin=$(bindir)
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
  fi
  # fsync stays on: the tests restart the server and expect committed data back.
  # Neither output of pg_ctl may stay the caller's: the server it starts would hold them open.
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c shared_buffers=64MB" start \
    >"$dir/pg_ctl.log" 2>&1 </dev/null \
    || { cat "$dir/pg_ctl.log" "$dir/server.log" >&2; exit 1; }
  echo "postgres://postgres@127.0.0.1:$port/postgres"
  ;;
restart)
  # A fast restart of a running cluster (its clients are cut off), for the tests of the sync
  # server's recovery.
  bin=$(bindir)
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 restart >"$dir/pg_ctl.log" 2>&1 </dev/null \
    || { cat "$dir/pg_ctl.log" "$dir/server.log" >&2; exit 1; }
  ;;
stop)
  bin=$(bindir)
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 </dev/null || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start DIR [PORT] | restart DIR | stop DIR" >&2
  exit 64
  ;;
esac
