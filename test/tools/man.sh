#!/usr/bin/env bash
# The man page of shardid-move (tools/man.sh, built by src/move/Makefile,
# installed by `make install`): it holds every option of `shardid-move
# --help` with its description, every long option the program accepts is
# in that help, options read as typed (ASCII "-", not a hyphen), groff
# renders it without a warning, apropos reads its NAME, its header carries
# the program's version, and the page `make install` put into
# $(pg_config --mandir)/man1 is the one built.  Then tools/man.sh on made-up
# programs: a help of another layout becomes its page, and a help without
# options is refused.  Needs the build of PG_CONFIG's server (`make test`
# builds and installs first), groff and man-db; no server.
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh servers

make -s -C src/move PG_CONFIG="$PG_CONFIG" shardid-move.1 >/dev/null || { fail "make could not build src/move/shardid-move.1"; finish; }
page=src/move/shardid-move.1
help=$(src/move/shardid-move --help)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# the page as man shows it, one line per paragraph (long lines, no
# hyphenation), its spaces squeezed
render() {
	LC_ALL=C.UTF-8 groff -man -Tutf8 -rLL=1000n -rHY=0 -P-cbou "$1" 2>"$tmp/groff.err" | tr -s ' '
}
shown=$(render "$page")
expect "$(cat "$tmp/groff.err")" = "" "groff's warnings on the page"
groff -man -ww -z "$page" 2>&1 | grep . && fail "groff -ww warns on the page"

# typed as written: in the roff, every "-" that starts a word, and every
# "-" of an option's entry and of the synopsis, is a minus sign ("\-"; a
# plain "-" is a hyphen, U+2010, where groff is not told otherwise)
plain=$(awk '/^\.\\"/ { next } /^\.SH/ { synopsis = ($0 == ".SH SYNOPSIS") }
	(tag || synopsis) && /(^|[^\\])-/ || /(^|[ ([|,])-/ { print FNR ": " $0 } { tag = ($0 == ".TP") }' "$page")
expect "$plain" = "" "lines of the man page with a plain \"-\" where a minus sign belongs"

# every option of --help: an entry of OPTIONS, typed as in the help, with
# the help's description (a hyphen of the prose may show as U+2010)
options=0
set -f
while IFS= read -r line; do
	case "$line" in " "*-*) ;; *) continue ;; esac
	set -- $line
	case "$1" in -*) ;; *) continue ;; esac
	names=""
	while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do names="$names ${1%,}"; shift; done
	options=$((options + 1))
	for o in $names; do
		printf '%s\n' "$shown" | grep -q -E -- "^ ?(-[A-Za-z], )?${o%%=*}(=[A-Z]+)?(,| |$)" ||
			fail "the option $o of --help is no entry of the man page"
	done
	desc=$*
	# the description continues on the lines below, up to the next option
	rest=$(printf '%s\n' "$help" | awk -v first="$line" '
		found && /^ +-/ { exit } found && /^$/ { exit } found { sub(/^ +/, ""); print }
		$0 == first { found = 1 }')
	desc=$(echo $desc $rest)
	printf '%s\n' "$shown" | sed 's/‐/-/g' | tr '\n' ' ' | tr -s ' ' | grep -q -F -- "$desc" ||
		fail "the description of $names is not in the man page: $desc"
done <<<"$help"
set +f
expect_ge "$options" 15 "options of --help found"
# and every long option shardid-move accepts (its getopt_long table) is in
# --help
for o in $(sed -n 's/^[[:space:]]*{"\([a-z-]*\)", [a-z_]*argument.*/\1/p' src/move/shardid-move.c); do
	printf '%s\n' "$help" | grep -q -E -- "--$o([= ,]|$)" || fail "the option --$o of shardid-move.c is not in --help"
done
# the exit status, said after the options
printf '%s\n' "$shown" | grep -q '^EXIT STATUS' || fail "the man page has no EXIT STATUS"

# NAME as apropos reads it, the version of --version in the header
expect "$(lexgrog "$page" 2>&1)" = "$page: \"shardid-move - moves logical shard N (one schema) from one PostgreSQL server to another\"" "lexgrog (apropos) on the man page"
version=$(src/move/shardid-move --version | awk '{ print $NF }')
expect "$(sed -n 's/^\.TH [^ ]* 1 "[^"]*" "\([^"]*\)".*/\1/p' "$page")" = "shardid $version" "the man page's header"

# the page make install put where PostgreSQL's own pages are
installed=$("$PG_CONFIG" --mandir)/man1/shardid-move.1
if [ -f "$installed" ]; then
	cmp -s "$installed" "$page" || fail "$installed is not the page built (make install again)"
else
	fail "$installed is missing: make install installs the man page"
fi

# tools/man.sh on a help of another program: its page has its options
cat >"$tmp/fake-tool" <<'EOF'
#!/bin/sh
case "$1" in
--version) echo "fake-tool (shardid) 9.9" ;;
--help) cat <<'HELP' ;;
fake-tool does one thing. It does it twice.

Usage:
  fake-tool --alpha=X [OPTION]...
  fake-tool --beta

Options:
  --alpha=X           the first, with a description
                      on two lines
  -b, --beta          the second
  --gamma-delta       .a line that starts with a dot, and a \backslash

Environment: FAKE_TOOL_HOME, where it looks.
HELP
esac
EOF
chmod +x "$tmp/fake-tool"
sh tools/man.sh "$tmp/fake-tool" >"$tmp/fake-tool.1" 2>"$tmp/man.err" || fail "tools/man.sh on fake-tool: $(cat "$tmp/man.err")"
fake=$(render "$tmp/fake-tool.1")
expect "$(cat "$tmp/groff.err")" = "" "groff's warnings on fake-tool's page"
for want in "fake-tool - does one thing" "fake-tool --alpha=X [OPTION]..." "fake-tool --beta" \
	"the first, with a description on two lines" "-b, --beta" "--gamma-delta" \
	".a line that starts with a dot, and a \\backslash" "ENVIRONMENT" "FAKE_TOOL_HOME, where it looks." \
	"shardid 9.9"; do
	printf '%s\n' "$fake" | tr '\n' ' ' | grep -q -F -- "$want" || fail "fake-tool's page lacks: $want"
done
expect "$(lexgrog "$tmp/fake-tool.1" 2>&1 | sed 's/^[^:]*: //')" = '"fake-tool - does one thing"' "lexgrog on fake-tool's page"

# a help without options is refused, with no page
cat >"$tmp/x-tool" <<'EOF'
#!/bin/sh
case "$1" in
--version) echo "x-tool 1.0" ;;
--help) printf 'x-tool does it.\n\nUsage:\n  x-tool\n' ;;
esac
EOF
chmod +x "$tmp/x-tool"
out=$(sh tools/man.sh "$tmp/x-tool" 2>&1 >/dev/null)
expect "$?" = 1 "tools/man.sh on a help without options: exit status"
expect "$out" = "tools/man.sh: the help has no first paragraph, Usage: or Options:" "tools/man.sh on a help without options"
finish
