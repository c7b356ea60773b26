#!/usr/bin/env bash
# What a Debian user installs: `make deb` builds postgresql-MAJOR-shardid
# from the tracked files of this clone; the files `make install` left are
# removed first; the .deb is installed with apt-get; shardid's pg_regress
# suite runs against the installed files as autopkgtest runs it
# (debian/tests/installcheck: both modes; sql/upgrade.sql updates every
# earlier release's scripts in the package to the packaged version);
# shardid-move runs from the package and `man` reads its page; then the
# package is purged and no file of shardid may remain.
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh packages

uninstall_source_build
debs=$(tools/deb.sh "$pkg_tmp") || { fail "make deb failed"; finish; }
deb=$(echo "$debs" | grep "/postgresql-$pg_major-shardid_[^/]*\.deb$")
[ -n "$deb" ] || { fail "no postgresql-$pg_major-shardid package among: $debs"; finish; }
echo "built $(basename "$deb")"

DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$pkg_tmp/install.log" 2>&1 ||
	{ cat "$pkg_tmp/install.log"; fail "apt-get install $deb failed"; finish; }
for f in "$("$PG_CONFIG" --pkglibdir)/shardid.so" "$("$PG_CONFIG" --sharedir)/extension/shardid.control" \
	"$("$PG_CONFIG" --bindir)/shardid-move" "$("$PG_CONFIG" --mandir)/man1/shardid-move.1"; do
	dpkg -S "$f" >/dev/null 2>&1 || fail "$f is not a file of the installed package"
done
"$("$PG_CONFIG" --bindir)/shardid-move" --help >/dev/null 2>&1 || fail "the packaged shardid-move --help failed"
man -M "$("$PG_CONFIG" --mandir)" shardid-move 2>/dev/null | grep -q -- '--drop-source' ||
	fail "man -M \$(pg_config --mandir) shardid-move does not show the packaged man page"
smoke "installed package" deb
# the installed README's and doc/'s links to one another resolve (those into
# the source tree's test/ stay there)
docdir=/usr/share/doc/postgresql-$pg_major-shardid
for f in "$docdir/README.md" "$docdir"/doc/*.md; do
	[ -f "$f" ] || { fail "$f is not installed"; continue; }
	for link in $(grep -o '](\([^)#:]*\.md\)' "$f" | sed 's/^](//' | sort -u); do
		case $link in ../test/*) continue ;; esac
		[ -f "$(dirname "$f")/$link" ] || fail "the link $link of the installed $f does not resolve"
	done
done

echo "--- debian/tests/installcheck"
debian/tests/installcheck 2>&1 | sed 's/^/  | /'
expect "${PIPESTATUS[0]}" = 0 "debian/tests/installcheck against the installed package"

DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "postgresql-$pg_major-shardid" >/dev/null 2>&1 ||
	fail "apt-get purge postgresql-$pg_major-shardid failed"
expect "$(shardid_files)" = "" "shardid files left after the package was purged"
finish
