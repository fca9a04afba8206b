#!/usr/bin/env bash
# The sync benchmark: builds cove-sync-server and the benchmark's client (release), starts a
# PostgreSQL of its own (.ci/postgres.sh) and one server on loopback, runs the client, and stops
# both. One Markdown table on stdout, progress on stderr. Sizes through the environment:
# BENCH_WRITERS (8), BENCH_UPLOADS (500 a writer), BENCH_LISTENERS (200), BENCH_ROUNDS (100),
# BENCH_IDLE (1000).
set -euo pipefail
cd "$(dirname "$0")/../.."
(cd SyncServer && swift build -c release --product cove-sync-server >&2)
(cd benchmarks/sync && swift build -c release >&2)
work=$(mktemp -d)
chmod 755 "$work"   # PostgreSQL runs as its own user below it
pg=$work/pg
port=${BENCH_PORT:-9190}
url=$(bash .ci/postgres.sh start "$pg" "${BENCH_PG_PORT:-56500}")
cat > "$work/config.json" <<JSON
{"listen": "127.0.0.1:$port", "database": "$url", "token_secret": "benchmark secret, not for anything else: 0123456789", "log_level": "warning"}
JSON
server=SyncServer/.build/release/cove-sync-server
"$server" serve --config "$work/config.json" >&2 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; bash .ci/postgres.sh stop "$pg"; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  sleep 0.1
done
token=$("$server" token --config "$work/config.json" --user bench)
SYNC_URL="http://127.0.0.1:$port" SYNC_TOKEN="$token" SYNC_SERVER_PID=$pid benchmarks/sync/.build/release/sync-bench
