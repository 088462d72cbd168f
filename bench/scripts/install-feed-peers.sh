#!/usr/bin/env bash
# Installs the change-feed group's peers from Debian, when they are missing: PgQ (postgresql-15-pgq3, a queue fed by a
# table trigger and cut by a ticker) and wal2json (postgresql-15-wal2json, a logical-decoding output plugin).
# Called by bench/run.sh before the `feed` group; never by tests. Prints one line per package, "PACKAGE: ok" or
# "PACKAGE: unavailable: REASON", and always exits 0: the group reports a peer it cannot install as null, with the
# reason, instead of failing.
set -uo pipefail

pgmajor="${GNOMON_PG_MAJOR:-15}"
sharedir="/usr/share/postgresql/$pgmajor/extension"
libdir="/usr/lib/postgresql/$pgmajor/lib"

# package, then a file that proves it is installed
peers=("postgresql-$pgmajor-pgq3" "$sharedir/pgq.control"
       "postgresql-$pgmajor-wal2json" "$libdir/wal2json.so")

updated=false
for ((i = 0; i < ${#peers[@]}; i += 2)); do
  pkg="${peers[i]}" file="${peers[i + 1]}"
  if [[ -e "$file" ]]; then
    echo "$pkg: ok"
    continue
  fi
  if ! command -v apt-get > /dev/null || ! command -v apt-cache > /dev/null; then
    echo "$pkg: unavailable: not a Debian-like system (no apt-get); install it by hand to measure this peer"
    continue
  fi
  if [[ "$(id -u)" != 0 ]]; then
    echo "$pkg: unavailable: not installed, and installing it needs root (sudo apt-get install -y $pkg)"
    continue
  fi
  candidate="$(apt-cache policy "$pkg" 2> /dev/null | awk '/Candidate:/ {print $2}')"
  if [[ -z "$candidate" || "$candidate" == "(none)" ]] && ! $updated; then
    apt-get update -qq > /dev/null 2>&1 || true
    updated=true
    candidate="$(apt-cache policy "$pkg" 2> /dev/null | awk '/Candidate:/ {print $2}')"
  fi
  if [[ -z "$candidate" || "$candidate" == "(none)" ]]; then
    echo "$pkg: unavailable: no installation candidate in the configured apt sources"
    continue
  fi
  if log="$(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" 2>&1)" && [[ -e "$file" ]]; then
    echo "$pkg: ok (installed $candidate)"
  else
    echo "$pkg: unavailable: apt-get install failed: $(echo "$log" | tail -n 1)"
  fi
done
exit 0
