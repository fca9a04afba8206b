#!/usr/bin/env bash
# A throwaway sync server for the tests of sync clients (libcove's, the bindings'): `start DIR
# [PGPORT]` starts a PostgreSQL in DIR/postgres on 127.0.0.1:PGPORT (.ci/postgres.sh; the first
# free port from 55433 when PGPORT is not given), makes the database cove_sync on it, and runs one
# `cove-sync-server serve` on a free loopback port with a configuration in DIR (a random
# token_secret, and a schema of the classes SubDog and SubPerson for the subscription tests, and
# RuledNote, which only its owner reads and writes, for the tests of compensating writes (a file
# that never subscribed gets none of it), and BenchItem for benchmarks/sync/client_bench.c; other
# classes sync in the all-changesets mode); once GET /health answers ok, it prints the environment the tests read:
#
#   export COVE_SYNC_TEST_URL=http://127.0.0.1:PORT
#   export COVE_SYNC_TEST_TOKEN=...         (a bearer token for the user alice)
#   export COVE_SYNC_TEST_TOKEN_OTHER=...   (one for the user bob)
#   export COVE_SYNC_TEST_SERVER=...        (the server's binary, COVE_SYNC_TEST_CONFIG its
#   export COVE_SYNC_TEST_CONFIG=...         configuration and COVE_SYNC_TEST_POSTGRES the
#   export COVE_SYNC_TEST_POSTGRES=...       cluster's folder: for tests that start more
#                                            instances or restart PostgreSQL)
#
# `stop DIR` stops the server and the PostgreSQL and removes what `start` put in DIR. By hand,
# after building the server (cd SyncServer && swift build):
#
#   eval "$(.ci/sync-server.sh start /tmp/cove-sync 5544)"
#   curl "$COVE_SYNC_TEST_URL/health"
#   .ci/sync-server.sh stop /tmp/cove-sync
#
# The server is SyncServer/.build/debug/cove-sync-server (COVE_SYNC_SERVER names another), built
# when missing. Only the export lines go to standard output; progress and errors go to standard
# error, with the server's log (DIR/server.log) when it does not come up within 30 s.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command=${1:-}
dir=${2:-}
usage() {
  echo "usage: $0 start DIR [PGPORT] | stop DIR" >&2
  exit 64
}
[ -n "$command" ] && [ -n "$dir" ] || usage

# Whether nothing listens on 127.0.0.1:$1.
port_free() {
  python3 -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1"
}

stop() {
  if [ -f "$dir/server.pid" ]; then
    local pid
    pid=$(cat "$dir/server.pid")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  if [ -d "$dir/postgres" ]; then bash "$root/.ci/postgres.sh" stop "$dir/postgres"; fi
  rm -f "$dir/sync.json" "$dir/server.log" "$dir/server.pid" "$dir/env"
  rmdir "$dir" 2>/dev/null || true
}

case "$command" in
start)
  pgport=${3:-}
  if [ -z "$pgport" ]; then
    pgport=55433
    until port_free "$pgport"; do pgport=$((pgport + 1)); done
  fi
  server=${COVE_SYNC_SERVER:-$root/SyncServer/.build/debug/cove-sync-server}
  if [ ! -x "$server" ]; then
    echo "building cove-sync-server" >&2
    (cd "$root/SyncServer" && swift build --product cove-sync-server) >&2
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # The cluster runs as the postgres user when this runs as root: it must reach DIR/postgres.
  if [ "$(id -u)" = 0 ]; then chmod a+x "$dir"; fi
  ok=""
  trap '[ -n "$ok" ] || stop' EXIT
  bash "$root/.ci/postgres.sh" start "$dir/postgres" "$pgport" >/dev/null
  pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U postgres cove_sync

  port=$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
  secret=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
  (umask 077; cat >"$dir/sync.json" <<JSON
{
  "listen": "127.0.0.1:$port",
  "database": "postgres://postgres@127.0.0.1:$pgport/cove_sync",
  "token_secret": "$secret",
  "log_level": "info",
  "schema": {
    "SubDog": {"primaryKey": "name",
               "properties": {"name": "string", "age": "int", "color": "string?", "toys": "string[]"}},
    "SubPerson": {"primaryKey": "id",
                  "properties": {"id": "int", "name": "string", "dog": "SubDog?"}},
    "RuledNote": {"primaryKey": "id",
                  "properties": {"id": "int", "owner": "string", "text": "string"}},
    "BenchItem": {"primaryKey": "id",
                  "properties": {"id": "int", "name": "string", "n": "int"}}
  },
  "rules": {
    "RuledNote": {"read": "owner == \$user", "write": "owner == \$user"}
  }
}
JSON
  )
  # Neither output may stay the caller's: `eval "$(...)"` would wait for the server to exit.
  "$server" serve --config "$dir/sync.json" >"$dir/server.log" 2>&1 </dev/null &
  echo $! >"$dir/server.pid"
  url=http://127.0.0.1:$port
  healthy=""
  deadline=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if python3 -c 'import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/health", timeout=2) as r:
    sys.exit(0 if json.load(r).get("status") == "ok" else 1)' "$url" 2>/dev/null; then
      healthy=1
      break
    fi
    if ! kill -0 "$(cat "$dir/server.pid")" 2>/dev/null; then
      exited=1
      break
    fi
    sleep 0.1
  done
  if [ -z "$healthy" ]; then
    if [ -n "${exited:-}" ]; then
      echo "$0: the sync server exited before it answered $url/health; its log:" >&2
    else
      echo "$0: the sync server did not answer $url/health within 30 s; its log:" >&2
    fi
    cat "$dir/server.log" >&2
    exit 1
  fi
  alice=$("$server" token --config "$dir/sync.json" --user alice)
  bob=$("$server" token --config "$dir/sync.json" --user bob)
  cat >"$dir/env" <<ENV
export COVE_SYNC_TEST_URL=$url
export COVE_SYNC_TEST_TOKEN=$alice
export COVE_SYNC_TEST_TOKEN_OTHER=$bob
export COVE_SYNC_TEST_SERVER=$server
export COVE_SYNC_TEST_CONFIG=$dir/sync.json
export COVE_SYNC_TEST_POSTGRES=$dir/postgres
ENV
  ok=1
  cat "$dir/env"
  ;;
stop)
  [ -d "$dir" ] || exit 0
  dir=$(cd "$dir" && pwd)
  stop
  ;;
*)
  usage
  ;;
esac
