#!/usr/bin/env bash
# The whole suite in two pytest processes side by side (the machine has two cores): the
# tests that use the Milvus server (`-m server`: one server, started once) and all the
# others. The first prints when it ends, the second as it goes; the exit code is non-zero
# if either failed. Extra arguments go to both.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTEST="${PYTEST:-.venv/bin/pytest}"
log="$(mktemp "${TMPDIR:-/tmp}/hopgraph-server-tests.XXXXXX")"
trap 'rm -f "$log"' EXIT
"$PYTEST" -q -m server --durations=10 "$@" >"$log" 2>&1 </dev/null &
server=$!
"$PYTEST" -q -m "not server" --durations=20 "$@" </dev/null
rest=$?
wait "$server"
served=$?
echo
echo "=== the tests that use the Milvus server (pytest -m server) ==="
cat "$log"
if [ "$rest" -ne 0 ] || [ "$served" -ne 0 ]; then
  echo "FAILED: pytest -m 'not server' exited $rest, pytest -m server exited $served" >&2
  exit 1
fi
