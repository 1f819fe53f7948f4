#!/usr/bin/env bash
# The whole suite in two pytest processes side by side (the machine has two cores): the
# tests that use the Milvus server (`-m server`: one server, started once) and all the
# others. The others print as they go, the server tests when they end; the exit code is
# non-zero if either failed. Extra arguments (files, -k, -x, ...) go to both; a process
# they leave without tests counts as passed. -rs: each skipped test is listed with its reason,
# which says how to get it running.
set -uo pipefail
set -m  # each pytest in a process group of its own, with SIGINT at its default (a script's
        # background job would ignore it): Ctrl-C or a kill stops both, and their teardown
        # stops the Milvus server
cd "$(dirname "$0")/.."
for arg in "$@"; do
  case "$arg" in
    -m|-m*) echo "tests/run.sh picks the markers itself; run pytest directly for -m" >&2
            exit 2 ;;
  esac
done
PYTEST="${PYTEST:-.venv/bin/pytest}"
log="$(mktemp "${TMPDIR:-/tmp}/hopgraph-server-tests.XXXXXX")"
"$PYTEST" -q -rs -m server --durations=10 "$@" >"$log" 2>&1 </dev/null &
server=$!
"$PYTEST" -q -rs -m "not server" --durations=20 "$@" </dev/null &
others=$!
trap 'kill -INT -- "-$others" "-$server" 2>/dev/null' INT TERM
trap 'echo; echo "=== the tests that use the Milvus server (pytest -m server) ==="; cat "$log"; rm -f "$log"' EXIT

finished() {  # the exit code of background job $1, waiting through interrupted waits
  local code
  wait "$1"; code=$?
  while kill -0 "$1" 2>/dev/null; do wait "$1"; code=$?; done
  if [ "$code" -eq 5 ]; then code=0; fi  # pytest: no tests collected
  return "$code"
}
finished "$others"; rest=$?
finished "$server"; served=$?
if [ "$rest" -ne 0 ] || [ "$served" -ne 0 ]; then
  echo "FAILED: pytest -m 'not server' exited $rest, pytest -m server exited $served" >&2
  exit 1
fi
