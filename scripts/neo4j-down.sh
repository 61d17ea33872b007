#!/usr/bin/env bash
# Stop the Neo4j that neo4j-up.sh started (nothing else).
set -euo pipefail
cd "$(dirname "$0")/.."
STATE=.neo4j
route=$(cat "$STATE/route" 2>/dev/null || true)
case "$route" in
  docker) docker compose stop neo4j ;;
  launcher)
    pid=$(cat "$STATE/pid" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -9 "$pid" 2>/dev/null || true
    fi ;;
  *) echo "neo4j: nothing started here" ;;
esac
rm -f "$STATE/route" "$STATE/pid"
