#!/usr/bin/env bash
# The main job: builds the `cove` command-line tool (a release build) and runs `cove demo`, then
# the tool itself on the demo's file: info, a query, and a few lines of the shell.
# Installs libedit-dev (the shell's line editing), libssl-dev (libcrypto, for encrypted files)
# and libcurl4-openssl-dev (libcurl, for libcove's sync client) from Debian when missing, as root
# or with sudo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
missing=""
for package in libedit-dev libssl-dev libcurl4-openssl-dev; do
  dpkg -s $package >/dev/null 2>&1 || missing="$missing $package"
done
if [ -n "$missing" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >&2
fi
swift build -c release --product cove
cove=.build/release/cove
if [ $# -gt 0 ]; then
  exec "$cove" demo "$@"
fi
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
"$cove" demo --path "$folder/demo.cove"
echo
echo "The same file through the cove tool (docs/cli.md):"
echo "\$ cove info demo.cove"
"$cove" info "$folder/demo.cove"
echo "\$ cove query demo.cove Person 'age > \$0 SORT(name ASC)' --arg 30 --format table"
"$cove" query "$folder/demo.cove" Person 'age > $0 SORT(name ASC)' --arg 30 --format table
echo "\$ cove shell demo.cove   (commands from standard input)"
"$cove" shell "$folder/demo.cove" <<'SHELL'
.classes
create Person {"name": "Dee", "age": 52}
set Person {"age": 53} WHERE name == 'Dee'
.mode markdown
Person WHERE age > 30 SORT(age DESC)
.explain Person name == 'Dee'
SHELL
