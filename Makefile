# Everything a fresh machine needs goes through these targets.
#   make demo   install, then show the sample memory (offline, embedded store)
#   make test   install, start Neo4j (compose, NEO4J_URI or the Maven launcher), run every test
#   make bench  install, start Neo4j the same way, measure both stores (bench/results/)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
OPENCODE := integrations/opencode
NODE_STAMP := $(OPENCODE)/node_modules/.installed
CLIENTS := tests/clients
CLIENTS_STAMP := $(CLIENTS)/node_modules/.installed

.PHONY: install install-node install-clients demo test lint neo4j-up neo4j-down bench bench-full bench-owners bench-locomo bench-faults bench-hardening clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	touch $(STAMP)

install: $(STAMP)

# The opencode plugin's build tools and opencode itself, for its tests. `npm install`
# keeps to the lock file; `npm ci` would refuse it where a registry lacks opencode's
# binaries for other platforms (optional dependencies the lock then cannot list).
$(NODE_STAMP): $(OPENCODE)/package.json $(OPENCODE)/package-lock.json
	cd $(OPENCODE) && npm install --no-audit --no-fund
	touch $(NODE_STAMP)

install-node: $(NODE_STAMP)

# Claude Code and Codex at the versions the end-to-end tests of the hooks pin. Each
# ships its program in a package for this platform, an optional dependency (and
# Claude Code links it in place at install): both must then answer --version.
$(CLIENTS_STAMP): $(CLIENTS)/package.json $(CLIENTS)/package-lock.json
	cd $(CLIENTS) && npm install --no-audit --no-fund --include=optional
	$(CLIENTS)/node_modules/.bin/claude --version
	$(CLIENTS)/node_modules/.bin/codex --version
	touch $(CLIENTS_STAMP)

install-clients: $(CLIENTS_STAMP)

demo: install
	$(VENV)/bin/pegasus demo

test: install install-node install-clients
	PYTHON=$(PY) ./scripts/test.sh

lint: install
	$(VENV)/bin/ruff check pegasus tests bench scripts
	$(VENV)/bin/ruff format --check pegasus tests bench scripts
	$(VENV)/bin/lint-imports --no-cache

neo4j-up: install
	PYTHON=$(PY) ./scripts/neo4j-up.sh

neo4j-down:
	./scripts/neo4j-down.sh

# Benchmarks (docs/benchmarks.md): the quick sizes, then the full range with a
# Neo4j heap large enough to import 1M edges in one transaction.
BENCH_SIZES ?= 1000 10000
bench: install
	PYTHON=$(PY) ./scripts/with-neo4j.sh $(PY) -m bench.suite --sizes $(BENCH_SIZES)
	$(PY) -m bench.report
	$(PY) -m bench.recall_probes

bench-full: install
	NEO4J_HEAP=$${NEO4J_HEAP:-6g} NEO4J_PAGECACHE=$${NEO4J_PAGECACHE:-4g} PYTHON=$(PY) ./scripts/with-neo4j.sh \
	  $(PY) -m bench.suite --sizes 1000 10000 100000 1000000 --out bench/results/suite-full.json
	$(PY) -m bench.report bench/results/suite-full.json

# A small owner's recall beside a 400k-key owner on one Neo4j (docs/benchmarks.md).
bench-owners: install
	PYTHON=$(PY) ./scripts/with-neo4j.sh $(PY) -m bench.owners

# LoCoMo evidence recall (docs/benchmarks.md): the data is read where it lies,
# never copied here; LOCOMO names the file.
LOCOMO ?= ../shared/locomo/locomo8.json
bench-locomo: install
	$(PY) -m bench.locomo --data $(LOCOMO)

# No session lost: every front end under every fault (bench/faults.py), and a fresh
# `pegasus recall` with the service's store named against none (bench/named_store.py).
bench-faults: install install-node
	cd $(OPENCODE) && npm run build
	PYTHON=$(PY) ./scripts/with-neo4j.sh $(PY) -m bench.faults
	$(PY) -m bench.named_store

# The service as a local daemon: each attack replayed, recall beside a held write
# lock, a Neo4j outage and its return (bench/hardening.py, docs/service.md).
bench-hardening: install
	PYTHON=$(PY) ./scripts/with-neo4j.sh $(PY) -m bench.hardening

clean:
	rm -rf $(VENV) .neo4j neo4j-launcher/target $(OPENCODE)/node_modules $(OPENCODE)/dist \
	  $(CLIENTS)/node_modules
