#!/usr/bin/env bash
# The whole suite against both stores. Uses NEO4J_URI when set, otherwise starts a
# Neo4j (and stops it again if it was this script that started it). An unreachable
# Neo4j (or a missing browser for the view test) is a failure here, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}

started=""
if [ -z "${NEO4J_URI:-}" ]; then
  if ! "$PYTHON" scripts/wait_neo4j.py bolt://127.0.0.1:7687 --timeout 0 >/dev/null 2>&1; then
    PYTHON=$PYTHON ./scripts/neo4j-up.sh || {
      echo "make test: could not start Neo4j (see above); the Neo4j half of the suite cannot run" >&2
      exit 1
    }
    started=yes
  fi
  export NEO4J_URI=bolt://127.0.0.1:7687
fi
[ -n "$started" ] && trap './scripts/neo4j-down.sh' EXIT

./scripts/browser.sh

export PEGASUS_REQUIRE_NEO4J=1 PEGASUS_REQUIRE_BROWSER=1
"$PYTHON" -m pytest "$@"
