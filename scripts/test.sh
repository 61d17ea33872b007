#!/usr/bin/env bash
# The whole suite against both stores (scripts/with-neo4j.sh provides the Neo4j).
# A missing Neo4j, browser, opencode, Claude Code or Codex is a failure here, never a
# skip (make test installs the programs: integrations/opencode, tests/clients).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}

"$(dirname "$PYTHON")/lint-imports" --no-cache  # the layers of pyproject.toml, no circles
./scripts/browser.sh
(cd integrations/opencode && npm test)  # builds the plugin the end-to-end test loads
PEGASUS_REQUIRE_NEO4J=1 PEGASUS_REQUIRE_BROWSER=1 PEGASUS_REQUIRE_OPENCODE=1 \
  PEGASUS_REQUIRE_CLIENTS=1 \
  PYTHON=$PYTHON ./scripts/with-neo4j.sh "$PYTHON" -m pytest "$@"
