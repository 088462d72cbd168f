#!/usr/bin/env bash
# Reproduces the figures in docs/performance.md: bench/run.sh [--quick] [GROUP...]
#
# Groups: write-read (tracked vs untracked pgbench_accounts, pgbench and server-side loops; with the PL/pgSQL and
# the optional C write trigger side by side), jmh
# (CoordinateBenchmark), experiments, feed (the change feed vs PgQ and wal2json, which this script installs
# from Debian when missing), branches (reads and writes on branches vs main, depth 4 vs 1, creating a branch,
# main with 100,000 open branches, catalog bytes per branch, diff on 2M vs 200k rows; about fifteen minutes),
# merge (gnomon.merge of 50,000 rows vs a tracked UPDATE, with concurrent writers, into a branch, and the merge
# fuzzer's rate), and checker (./gnomon check: checked_ops_per_s, workload_tps_logging_on_vs_off). Without groups,
# all of them; --quick runs short measurements for a smoke test (write-read only unless groups are named) in about
# three minutes. Each group writes
# target/bench/GROUP.json (and GROUP.txt with plans and WAL breakdowns) under the repository root.
#
# Every measurement runs on a throwaway PostgreSQL cluster started by gnomon-testkit from the local server
# binaries (GNOMON_PG_BINDIR, else /usr/lib/postgresql/15/bin); as root, PostgreSQL runs as the postgres OS user.
set -euo pipefail

root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
classes="$root/bench/target/classes"
classpath_file="$root/bench/target/classpath.txt"

needs_build() {
  [[ -f "$classpath_file" && -f "$classes/META-INF/BenchmarkList" && -f "$classes/io/gnomon/bench/BenchMain.class" ]] \
    || return 0
  local entry
  local -a entries
  IFS=':' read -r -a entries < "$classpath_file"
  for entry in "${entries[@]}"; do
    [[ -e "$entry" ]] || return 0
  done
  # any pom or main source (Java, SQL, resources) newer than the last build
  [[ -n "$(find "$root" -path "$root/.git" -prune -o \
             \( -name pom.xml -o -path '*/src/main/*' \) -type f -newer "$classpath_file" -print -quit)" ]]
}

if needs_build; then
  command -v mvn > /dev/null || { echo "bench: Maven (mvn) is needed to build Gnomon" >&2; exit 1; }
  # only the main code of bench and the modules it depends on: their tests are not run here, so not compiled either
  build=(mvn -q -B install -DskipTests -Dmaven.test.skip=true -pl bench -am)
  echo "bench: building (${build[*]})..." >&2
  # a second try when another build on this machine was rewriting the same target directories
  (cd "$root" && { "${build[@]}" >&2 || { sleep 5 && "${build[@]}" >&2; }; }) \
    || { echo "bench: the build failed; see above." >&2; exit 1; }
  touch "$classpath_file"
fi

# A run takes up to twenty minutes; a concurrent `mvn install` must not swap jars or classes under it, so it
# runs from a private copy of Gnomon's own jars and of the bench classes.
snapshot="$root/target/bench/.classpath"
rm -rf "$snapshot" && mkdir -p "$snapshot/lib"
cp -r "$classes" "$snapshot/classes"
cp_entries=("$snapshot/classes")
IFS=":" read -r -a entries < "$classpath_file" || true  # the file has no final newline
n=0
for entry in "${entries[@]}"; do
  # Gnomon's own modules: jars in the local repository, or (after a reactor build) files under this tree
  if [[ ( "$entry" == */io/gnomon/* || "$entry" == "$root"/* ) && -e "$entry" ]]; then
    n=$((n + 1))
    copy="$snapshot/lib/$n-$(basename "$entry")"
    cp -r "$entry" "$copy" && cp_entries+=("$copy")
  else
    cp_entries+=("$entry")
  fi
done
cp_string="$(IFS=':'; echo "${cp_entries[*]}")"

cd "$root"
# what is measured: the commit, and whether the SQL or Java that bench runs differed from it
revision="$(git log -1 --format='%h %cI' 2> /dev/null || echo unknown)"
if [[ -n "$(git status --porcelain -- gnomon-sql/src/main/resources gnomon-core/src/main gnomon-feed/src/main gnomon-c 2> /dev/null)" ]]; then
  revision="$revision, with uncommitted changes to the SQL, gnomon-c, gnomon-core or gnomon-feed"
fi
export GNOMON_BENCH_REVISION="$revision"
# the feed group compares with PgQ and wal2json from Debian: install them here when missing (never from tests)
if [[ $# -eq 0 || " $* " == *" feed "* ]]; then
  GNOMON_BENCH_FEED_PEERS="$("$root/bench/scripts/install-feed-peers.sh")"
  export GNOMON_BENCH_FEED_PEERS
  echo "bench: feed peers: ${GNOMON_BENCH_FEED_PEERS//$'\n'/; }" >&2
fi
# the branches group counts main's instructions with and without 100,000 branches under callgrind (Debian's valgrind):
# installed here as root when missing; without it, those two rows say why they were not measured
if [[ $# -eq 0 || " $* " == *" branches "* ]] && ! command -v valgrind > /dev/null; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get > /dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind > /dev/null 2>&1 \
      || echo "bench: apt-get install valgrind failed: main's instruction counts will not be measured" >&2
  else
    echo "bench: valgrind is not installed (apt-get install valgrind): main's instruction counts will not be measured" >&2
  fi
fi
# the optional C write path (gnomon-c), measured by the write-read group beside the PL/pgSQL trigger: built here with
# PGXS and loaded by absolute path from the run's private copy; without it, the group measures PL/pgSQL only
c_library=()
if make -s -C "$root/gnomon-c" > "$snapshot/gnomon-c-build.log" 2>&1 && cp "$root/gnomon-c/gnomon.so" "$snapshot/gnomon.so"; then
  c_library=("-Dgnomon.c.library=$snapshot/gnomon.so")
else
  echo "bench: gnomon-c did not build (see $snapshot/gnomon-c-build.log; it needs postgresql-server-dev-15):" \
       "the C write path is not measured" >&2
fi
echo "bench: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); measuring $revision" >&2
exec java -Xmx1g -Dorg.slf4j.simpleLogger.defaultLogLevel=error "${c_library[@]}" -cp "$cp_string" io.gnomon.bench.BenchMain --out "$root/target/bench" "$@"
