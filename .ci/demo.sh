#!/usr/bin/env bash
# The main job: builds the `cove` command-line tool and runs `cove demo`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
swift build --product cove
.build/debug/cove demo "$@"
