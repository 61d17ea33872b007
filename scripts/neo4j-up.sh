#!/usr/bin/env bash
# Start a Neo4j on bolt://127.0.0.1:7687 by whichever route this machine allows,
# and wait until it answers:
#   1. NEO4J_URI already set and answering: use it as it is;
#   2. a Docker engine answers: the compose service;
#   3. otherwise: the Maven launcher (neo4j-launcher/), Neo4j Community from Maven Central.
# Either way Neo4j Browser answers on http://localhost:${NEO4J_HTTP_PORT:-7474}/browser/.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}
STATE=.neo4j
URI=${NEO4J_URI:-bolt://127.0.0.1:7687}
WAIT=${NEO4J_WAIT_SECONDS:-180}
HTTP_PORT=${NEO4J_HTTP_PORT:-7474}
BROWSER="http://localhost:$HTTP_PORT/browser/"

answers() { "$PYTHON" scripts/wait_neo4j.py "$URI" --timeout "${1:-0}" >/dev/null 2>&1; }

if answers 0; then
  echo "neo4j: already answering at $URI (Browser: $BROWSER)"
  exit 0
fi

mkdir -p "$STATE"
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  echo "neo4j: starting the docker compose service"
  docker compose up -d neo4j
  echo docker > "$STATE/route"
else
  command -v java >/dev/null || { echo "neo4j: no Docker engine and no java: install a JDK 17" >&2; exit 1; }
  command -v mvn >/dev/null || { echo "neo4j: no Docker engine and no mvn: install Maven" >&2; exit 1; }
  echo "neo4j: no Docker engine; building the Maven launcher (Neo4j Community 5.26)"
  (cd neo4j-launcher && mvn -B -q package dependency:build-classpath \
      -Dmdep.outputFile=target/classpath.txt) || { echo "neo4j: the launcher did not build" >&2; exit 1; }
  home="$STATE/home"
  rm -rf "$home"  # a throwaway database for every start
  port=${URI##*:}
  nohup java -Xmx"${NEO4J_HEAP:-2g}" -cp "neo4j-launcher/target/classes:$(cat neo4j-launcher/target/classpath.txt)" \
    pegasus.launcher.Launcher "$home" "$port" "$HTTP_PORT" > "$STATE/neo4j.log" 2>&1 &
  echo $! > "$STATE/pid"
  echo launcher > "$STATE/route"
fi

if ! "$PYTHON" scripts/wait_neo4j.py "$URI" --timeout "$WAIT"; then
  echo "neo4j: did not answer at $URI within ${WAIT}s; last lines of its log:" >&2
  tail -20 "$STATE/neo4j.log" 2>/dev/null >&2 || true
  exit 1
fi
echo "neo4j: answering at $URI; Browser: $BROWSER"
