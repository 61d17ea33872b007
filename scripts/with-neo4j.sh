#!/usr/bin/env bash
# Run a command with a Neo4j answering at NEO4J_URI: the one given, one already
# running at bolt://127.0.0.1:7687, or one started here (and stopped again after).
# An unreachable Neo4j is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}

started=""
if [ -z "${NEO4J_URI:-}" ]; then
  if ! "$PYTHON" scripts/wait_neo4j.py bolt://127.0.0.1:7687 --timeout 0 >/dev/null 2>&1; then
    PYTHON=$PYTHON ./scripts/neo4j-up.sh || {
      echo "$1: could not start Neo4j (see above); what needs it cannot run" >&2
      exit 1
    }
    started=yes
  fi
  export NEO4J_URI=bolt://127.0.0.1:7687
fi
[ -n "$started" ] && trap './scripts/neo4j-down.sh' EXIT

"$@"
