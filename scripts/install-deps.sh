#!/usr/bin/env bash
# Installs the Debian packages sluice builds and tests with (the C libraries'
# -dev packages, libpq for PostgreSQL stores, the compression tools the tests
# use, sqlite3 for looking at stores, GNU time for the memory-bound test, and
# the PostgreSQL server the tests start in a temporary directory of their own). Needs root or sudo; does
# nothing when everything is there.
set -euo pipefail
packages=(pkg-config libxml2-dev libyajl-dev libsqlite3-dev zlib1g-dev libbz2-dev libzstd-dev liblzma-dev libpq-dev libssl-dev
          gzip bzip2 zstd xz-utils sqlite3 time postgresql postgresql-client)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
