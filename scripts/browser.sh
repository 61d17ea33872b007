#!/usr/bin/env bash
# Headless Chromium for the view page's test: Debian's chromium package, installed
# when no Chromium is on the machine (needs root and apt, as on CI).
set -euo pipefail
for name in chromium chromium-browser google-chrome; do
  command -v "$name" >/dev/null 2>&1 && exit 0
done
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "browser: installing Debian's chromium for the view test"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "browser: no Chromium; install it (Debian: apt-get install chromium) for the view test" >&2
  exit 1
fi
