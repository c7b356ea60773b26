#!/usr/bin/env bash
# Every problem doctor() (and citus_doctor()) can return is a row of the
# README's table of the doctor's problems: each literal given to "problem"
# in src/sql/shardid.sql is found there, in backquotes.  No server.
. "$(dirname "$0")/../lib_script.sh"
cd "$(dirname "$0")/../.." || exit 1

table=$(sed -n '/^\*\*Doctor\.\*\*/,/^\*\*Routing\.\*\*/p' README.md)
[ -n "$table" ] || { fail "README has no **Doctor.** table"; finish; }
problems=$(grep -o "problem := '[^;]*';" src/sql/shardid.sql | sed "s/^problem := '//; s/';\$//; s/''/'/g" | sort -u)
expect_ge "$(echo "$problems" | wc -l)" 40 "problems found in src/sql/shardid.sql"
while IFS= read -r p; do
	grep -qF "\`$p\`" <<<"$table" || fail "doctor problem '$p' is not in the README's table of the doctor's problems"
done <<<"$problems"
finish
