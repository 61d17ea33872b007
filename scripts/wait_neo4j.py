"""Wait until a Neo4j answers over Bolt: ``wait_neo4j.py URI [--timeout SECONDS]``."""

from __future__ import annotations

import argparse
import os
import sys
import time

import neo4j


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("uri")
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    user, password = os.environ.get("NEO4J_USER"), os.environ.get("NEO4J_PASSWORD")
    auth = (user, password) if user and password else None
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            with neo4j.GraphDatabase.driver(args.uri, auth=auth) as driver:
                driver.verify_connectivity()
            print(f"neo4j: answering at {args.uri}")
            return 0
        except Exception as exc:  # any failure means "not yet"
            if time.monotonic() >= deadline:
                print(f"neo4j: not answering at {args.uri}: {exc}", file=sys.stderr)
                return 1
            time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
