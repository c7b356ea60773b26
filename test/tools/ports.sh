#!/usr/bin/env bash
# Every script keeps its servers' ports below SHARDID_PORT_BASE + 1000
# (test/lib.sh): test/run.sh's job pool runs two scripts at once with bases
# that far apart (read from test/run.sh), so a port past that is the other
# slot's, and the second
# server to bind it fails ("could not bind ... Address already in use"),
# now and then, as the slowest scripts happen to meet.  Reads the ports the
# scripts name: SHARDID_PORT_BASE + N, move_servers OFFSET COUNT,
# smoke's +90; each must leave 10 ports of room (a script adds 1 or 2 to a
# port it named).  Found when the slots were 200 apart: move_servers up to
# 620 in test/cluster, which CI's runs hit now and then.  No server.
. "$(dirname "$0")/../lib.sh" servers
cd "$(dirname "$0")/../.." || exit 1

# the job pool's spacing of the slots' bases, as test/run.sh sets it
span=$(sed -n 's/.*SHARDID_PORT_BASE=\$((SHARDID_PORT_BASE + \([0-9]*\) \* slot)).*/\1/p' test/run.sh)
[ -n "$span" ] || { fail "test/run.sh sets no SHARDID_PORT_BASE + N * slot"; finish; }
limit=$((span - 10))

# ports_over FILE...: the lines naming a port $limit or more above the base
ports_over() {
	awk -v limit="$limit" '
		{
			line = $0
			while (match(line, /SHARDID_PORT_BASE \+ [0-9]+/)) {
				n = substr(line, RSTART + 20, RLENGTH - 20) + 0
				if (n >= limit) print FILENAME ":" FNR ": SHARDID_PORT_BASE + " n
				line = substr(line, RSTART + RLENGTH)
			}
			if (match($0, /move_servers [0-9]+ [0-9]+/)) {
				split(substr($0, RSTART, RLENGTH), w, " ")
				if (w[2] + w[3] - 1 >= limit) print FILENAME ":" FNR ": move_servers " w[2] " " w[3]
			}
		}' "$@"
}

# the scripts that start servers (not the library and the runner, which
# set the bases, nor this one)
scripts=$(git ls-files 'test/*.sh' 'test/*.bash' 'tools/*.sh' | grep -vxE 'test/lib.sh|test/run.sh|test/tools/ports.sh')
over=$(ports_over $scripts)
expect "$over" = "" "ports $limit or more above SHARDID_PORT_BASE (the job pool's slots are $span apart)"
echo "$(echo "$scripts" | wc -l) scripts, the highest port offset named: $(
	grep -ohE 'SHARDID_PORT_BASE \+ [0-9]+|move_servers [0-9]+ [0-9]+' $scripts |
		awk '{ n = ($1 == "move_servers") ? $2 + $3 - 1 : $3; if (n > m) m = n } END { print m }')"

# the test of the test
printf 'x=$((SHARDID_PORT_BASE + %d))\nmove_servers %d 2\nmove_servers %d 3\n' $((limit + 5)) $((limit - 1)) $((limit - 10)) >"$SHARDID_TMP/ports.sh"
expect "$(ports_over "$SHARDID_TMP/ports.sh" | wc -l)" = 2 "ports_over finds an offset past the limit and move_servers reaching it (test of the test)"
finish
