#!/usr/bin/env bash
# test/run.sh: shardid's whole test suite on throwaway clusters of the server
# PG_CONFIG names (default: pg_config on PATH).
#
#   0. the pure core outside the server: unit test and fuzzing (test/unit);
#   1. a server without shardid preloaded: the pg_regress suite in sql/ and
#      expected/, then the mode's own suite: on PostgreSQL < 17 session mode
#      (test/session/sql), on 17+ strict mode through the shared memory
#      registry (test/strict/sql); then the scripts of UNPRELOADED, and
#      on 17+ the concurrency scripts of REGISTRY;
#   2. the same server restarted with shared_preload_libraries = 'shardid'
#      (strict mode): sql/ again, test/strict/sql, then the scripts of
#      PRELOADED;
#   3. the scripts of the OWN_SERVERS dirs, each starting its own servers
#      (logical shards on three servers and shard moves, failover);
#   4. both modes' pg_regress suites again with the undefined-behaviour
#      sanitizer and with the server under valgrind (test/sanitize.sh).
#
# Run it through `make test`, which builds and installs the extension first
# (`make test PG_CONFIG=/path/to/pg_config` for another server).  It ends
# with "N passed, N failed, N skipped" and exits non-zero when anything
# failed.  A script that exits 77 is skipped (it says why).
#
# Every part has a name, printed as it runs; the suites by name:
#   unit/core                  test/unit: unit test and fuzzing
#   tools/NAME.sh              test/tools: the tools of tools/ (no server)
#   regress/MODE/NAME          pg_regress: sql/NAME.sql, and the mode suites
#                              test/session/sql (NAME session) and
#                              test/strict/sql (NAME strict); MODE is session,
#                              strict-dsm (17+, not preloaded) or strict
#   session/NAME.sh            test/session scripts (not preloaded)
#   security/NAME.sh           test/security: hostile roles (not preloaded)
#   strict/NAME.sh             test/strict scripts (preloaded); on 17+ some
#   strict-dsm/strict/NAME.sh  also run not preloaded (REGISTRY below)
#   cluster/NAME.sh            test/cluster: shards on three servers, moves
#   failover/NAME.sh           test/failover: crashes, promotion, epoch
#   citus/NAME.sh              test/citus: a Citus coordinator and two
#                              workers (PostgreSQL 16+; builds Citus from
#                              ../shared/citus once, cached; skipped on 15)
#   sanitize                   test/sanitize.sh: pg_regress under UBSan and
#                              valgrind
# SHARDID_TESTS="pattern ..." runs only the parts whose name contains one of
# the patterns (shell globs; a leading ^ anchors a pattern at the start of
# the name): "regress/" every pg_regress test, "^strict/" the strict
# scripts, "failover/ cluster/move.sh" those two.  SHARDID_SKIP="pattern
# ..." leaves out the parts that match any pattern.  SHARDID_JOBS (default
# 2) is how many scripts of OWN_SERVERS, and the sanitizer run, run at a
# time: each in its own directory, on its own ports (SHARDID_PORT_BASE, the
# runner's plus 1000 per slot: a script keeps its ports within 1000 of its
# base), its output printed in the order of the list; SHARDID_JOBS=1 runs
# them one by one.  FUZZ_SECONDS sets the fuzzing time (default 60).
# `make installcheck` runs the mode's suite and sql/ against a running
# server, whatever its shardid.epoch (doc/development.md;
# test/tools/installcheck_epoch.sh checks it).
cd "$(dirname "$0")/.." || exit 1
# the ports of the runner's server and of each slot of the job pool
case ${SHARDID_JOBS:-2} in
'' | *[!0-9]*) SHARDID_PORT_BLOCKS=2 ;;
*) SHARDID_PORT_BLOCKS=$((${SHARDID_JOBS:-2} + 1)) ;;
esac
. test/lib.sh servers

# Scripts by the server they need: directories (each *.sh in it) or single
# scripts; adding a directory is one word here.
UNPRELOADED="test/session test/security"	# on the shared server, shardid not preloaded
# also on it when that is strict mode through the registry (PostgreSQL 17+)
REGISTRY="test/strict/pgbench.sh test/strict/seq_concurrency.sh test/strict/convert.sh"
PRELOADED="test/strict"		# on the shared server, shardid preloaded
OWN_SERVERS="test/cluster test/failover test/citus"	# each starts and stops its own
TOOLS="test/tools"	# the project's tools (tools/), no server
# the parts that take longest, started first when SHARDID_JOBS > 1
FIRST="sanitize citus/failover.sh cluster/move_faults.sh cluster/move_load.sh citus/rebalance.sh failover/schedule.sh"

# SHARDID_JOBS: how many parts of OWN_SERVERS and the sanitizer run at a time
jobs=${SHARDID_JOBS:-2}
case "$jobs" in
'' | *[!0-9]* | 0)
	echo "SHARDID_JOBS must be a number of at least 1, not '$jobs'"
	exit 2
	;;
esac

passed=0
failed=0
skipped=0
failures=""
started=$(date +%s)

timings=""
record() {	# record NAME STATUS [START]: START, the script's start (date +%s), adds its seconds
	local took=""
	if [ -n "${3:-}" ]; then
		took=" ($(($(date +%s) - $3)) s)"
		timings="$timings$(($(date +%s) - $3)) $1
"
	fi
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
		echo "ok      $1$took"
	elif [ "$2" = 77 ]; then
		skipped=$((skipped + 1))
		echo "skipped $1$took"
	else
		failed=$((failed + 1))
		failures="$failures $1"
		echo "FAILED  $1$took"
	fi
}

matches() {	# matches NAME PATTERN: NAME contains PATTERN (^PATTERN: starts with it)
	case "$2" in
	^*) case "$1" in ${2#^}*) return 0 ;; esac ;;
	*) case "$1" in *$2*) return 0 ;; esac ;;
	esac
	return 1
}

selected() {	# selected NAME: chosen by SHARDID_TESTS, not left out by SHARDID_SKIP
	local - p
	set -f		# the patterns are globs for case, not for file names
	for p in ${SHARDID_SKIP:-}; do
		matches "$1" "$p" && return 1
	done
	[ -z "${SHARDID_TESTS:-}" ] && return 0
	for p in $SHARDID_TESTS; do
		matches "$1" "$p" && return 0
	done
	return 1
}

# regress_suite LABEL INPUTDIR: each pg_regress test counts once
regress_suite() {
	local label=$1 dir=$2 out="$SHARDID_TMP/regress-$1-${2//\//_}" t any=0
	for t in "$dir"/sql/*.sql; do
		[ -e "$t" ] && selected "regress/$label/$(basename "$t" .sql)" && any=1
	done
	[ $any = 1 ] || return 0
	regress_run "$dir" "$out"
	while read -r status t; do
		[ "$status" = ok ] && record "regress/$label/$t" 0 || record "regress/$label/$t" 1
	done <"$out/outcome"
}

# script_list DIR|SCRIPT...: the scripts named and those in the directories
script_list() {
	local d
	for d in "$@"; do
		if [ -d "$d" ]; then ls "$d"/*.sh 2>/dev/null; elif [ -e "$d" ]; then echo "$d"; fi
	done
}

# scripts [-p PREFIX] DIR|SCRIPT...: each script runs in a fresh database of
# the shared server, its name prefixed with PREFIX
scripts() {
	local s name t0 prefix=""
	[ "$1" = -p ] && { prefix=$2; shift 2; }
	for s in $(script_list "$@"); do
		name=$prefix${s#test/}
		selected "$name" || continue
		q -c "CREATE DATABASE shardid_script" >/dev/null
		PGDATABASE=shardid_script q -c "CREATE EXTENSION shardid" >/dev/null
		echo "--- $name"
		t0=$(date +%s)
		PGDATABASE=shardid_script bash "$s"
		record "$name" $? "$t0"
		q -c "DROP DATABASE shardid_script WITH (FORCE)" >/dev/null
	done
}

# own_server_scripts DIR|SCRIPT...: each script starts, checks and removes its own servers
own_server_scripts() {
	local s name t0
	for s in $(script_list "$@"); do
		name=${s#test/}
		selected "$name" || continue
		echo "--- $name"
		t0=$(date +%s)
		SHARDID_TMP="" bash "$s"
		record "$name" $? "$t0"
	done
}

# header NAME: the heading printed before a part that has one of its own
header() {
	[ "$1" = sanitize ] && echo "== pg_regress under UBSan and valgrind (test/sanitize.sh)"
	return 0
}

# parts NAME SCRIPT [NAME SCRIPT...]: scripts that start their own servers,
# SHARDID_JOBS at a time.  One at a time, each runs as own_server_scripts
# runs it.  Several at a time (the job pool): each gets its own directory
# (SHARDID_TMP empty, as above) and its own ports, SHARDID_PORT_BASE set to
# the runner's plus 1000 times its slot (1 to SHARDID_JOBS; a script's ports
# lie within 1000 of its base: test/tools/ports.sh), its output goes to a
# file, and the parts are printed, recorded and timed in the order given,
# as if run one by one; the slow ones of FIRST start first, so that no long
# script is left running alone at the end.
declare -A pool_slot=()	# the running parts: pid (and process group) -> slot
pool_stop() {	# at exit: stop the running parts, which stop their servers
	local pid
	for pid in "${!pool_slot[@]}"; do
		kill -TERM -- -"$pid" 2>/dev/null
	done
	wait
}
trap 'pool_stop; shardid_cleanup' EXIT

parts() {
	local -a names=() scripts=() order=()
	local n i j f s pid slot rc secs dir=$SHARDID_TMP/parts pos=0 printed=0 running=0 free=""
	while [ $# -ge 2 ]; do
		names+=("$1")
		scripts+=("$2")
		shift 2
	done
	n=${#names[@]}
	if [ "$jobs" = 1 ]; then
		for ((i = 0; i < n; i++)); do
			header "${names[i]}"
			echo "--- ${names[i]}"
			f=$(date +%s)
			SHARDID_TMP="" bash "${scripts[i]}"
			record "${names[i]}" $? "$f"
		done
		return
	fi
	# the start order: FIRST's parts in FIRST's order, then the others
	for f in $FIRST; do
		for ((i = 0; i < n; i++)); do
			[ "${names[i]}" = "$f" ] && order+=("$i")
		done
	done
	for ((i = 0; i < n; i++)); do
		case " $FIRST " in *" ${names[i]} "*) ;; *) order+=("$i") ;; esac
	done
	mkdir -p "$dir"
	for ((slot = 1; slot <= jobs; slot++)); do free="$free $slot"; done
	while [ $printed -lt $n ]; do
		while [ $running -lt "$jobs" ] && [ $pos -lt $n ]; do
			i=${order[pos]}
			pos=$((pos + 1))
			set -- $free
			slot=$1
			shift
			free="$*"
			set -m	# in a process group of its own, which pool_stop ends
			(
				start=$(date +%s)
				SHARDID_TMP="" SHARDID_PORT_BASE=$((SHARDID_PORT_BASE + 1000 * slot)) \
					bash "${scripts[i]}" </dev/null >"$dir/$i.out" 2>&1
				echo "$? $(($(date +%s) - start))" >"$dir/$i.rc.tmp"
				mv "$dir/$i.rc.tmp" "$dir/$i.rc"
			) &
			set +m
			pool_slot[$!]=$slot
			running=$((running + 1))
		done
		# print what has ended, in the order given
		while [ $printed -lt $n ] && [ -f "$dir/$printed.rc" ]; do
			header "${names[printed]}"
			echo "--- ${names[printed]}"
			cat "$dir/$printed.out"
			read -r rc secs <"$dir/$printed.rc"
			record "${names[printed]}" "$rc" $(($(date +%s) - secs))
			printed=$((printed + 1))
		done
		[ $printed -lt $n ] || break
		# one part ends: its slot is free again
		pid=""
		wait -n -p pid
		if [ -n "$pid" ] && [ -n "${pool_slot[$pid]:-}" ]; then
			free="$free ${pool_slot[$pid]}"
			unset "pool_slot[$pid]"
			running=$((running - 1))
		fi
	done
}

echo "PostgreSQL $("$PG_CONFIG" --version | sed 's/^PostgreSQL //') ($PG_CONFIG)"
if selected unit/core; then
	echo "== the pure core (test/unit)"
	bash test/unit/run.sh
	record unit/core $?
fi

# (by the scripts' names: "tools/man.sh" alone selects the part too)
if [ -n "$(for s in $(script_list $TOOLS); do selected "${s#test/}" && echo "$s"; done)" ]; then
	echo "== the tools (test/tools)"
	own_server_scripts $TOOLS
fi

port=$SHARDID_PORT_BASE
cluster_init main "$port" || exit 1
use_cluster "$port"
export SHARDID_TMP SHARDID_CLUSTER=main

cluster_start main || exit 1
mode=$(server_mode)
echo "== shardid not preloaded ($mode mode)"
regress_suite "$mode" .
if [ "$mode" = session ]; then
	regress_suite session test/session
	scripts $UNPRELOADED
else
	regress_suite "$mode" test/strict
	scripts $UNPRELOADED
	scripts -p "$mode/" $REGISTRY
fi

cluster_stop main
cluster_conf main "shared_preload_libraries = 'shardid'"
cluster_start main || exit 1
mode=$(server_mode)
echo "== shared_preload_libraries = 'shardid' ($mode mode)"
regress_suite "$mode" .
regress_suite "$mode" test/strict
scripts $PRELOADED
cluster_stop main

# the scripts of OWN_SERVERS, then the sanitizer runs (its own servers too),
# SHARDID_JOBS at a time
set --
for s in $(script_list $OWN_SERVERS); do
	selected "${s#test/}" && set -- "$@" "${s#test/}" "$s"
done
[ $# -gt 0 ] && echo "== on servers of their own"
selected sanitize && set -- "$@" sanitize test/sanitize.sh
parts "$@"
echo
echo "PostgreSQL $("$PG_CONFIG" --version | sed 's/^PostgreSQL //'): $(($(date +%s) - started)) s"
[ -n "$timings" ] && echo "slowest: $(printf '%s' "$timings" | sort -rn | head -8 | awk '{ printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1 }')"
[ -n "$failures" ] && echo "failed:$failures"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
