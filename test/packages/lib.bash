# test/packages/lib.bash: what the package tests share.  Source it after
# test/lib_script.sh.  They install into the server PG_CONFIG names (Debian's
# PostgreSQL, as root): run them on a machine whose PostgreSQL nobody else
# uses meanwhile (.ci/run runs them last).

[ "$(id -u)" = 0 ] || { echo "skipped: the package tests install packages and run as root"; exit 77; }
case "$("$PG_CONFIG" --bindir)" in
/usr/lib/postgresql/*) ;;
*) echo "skipped: $PG_CONFIG is not a server from Debian's packages"; exit 77 ;;
esac
pg_major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
pkg_tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-pkg.XXXXXX")
chmod 755 "$pkg_tmp"
trap 'rm -rf "$pkg_tmp"; shardid_cleanup' EXIT

# shardid_files: every file of shardid in the server's directories (the
# man page of shardid-move too)
shardid_files() {
	find "$("$PG_CONFIG" --pkglibdir)" "$("$PG_CONFIG" --sharedir)/extension" "$("$PG_CONFIG" --bindir)" \
		"$("$PG_CONFIG" --mandir)/man1" -name '*shardid*' 2>/dev/null | sort
}

# uninstall_source_build: remove what `make install` put there (the suites
# before installed the checkout's build); nothing of shardid may remain
uninstall_source_build() {
	make -s uninstall PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1
	expect "$(shardid_files)" = "" "shardid files left by make install after make uninstall"
}

# smoke LABEL: a throwaway cluster of the server; the default version
# installs and makes an id that decodes to its shard
smoke() {
	local port=$((SHARDID_PORT_BASE + 90)) version
	version=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" shardid.control)
	cluster_init "smoke$2" "$port" || { fail "$1: initdb"; return; }
	cluster_start "smoke$2" || { fail "$1: server start"; return; }
	expect "$(PGHOST=$SHARDID_TMP PGPORT=$port PGUSER=postgres q -d postgres -F' ' \
		-c "CREATE EXTENSION shardid" \
		-c "SELECT extversion, shardid.id_shard(shardid.next_id(42, 7)) FROM pg_extension WHERE extname = 'shardid'")" \
		= "$version 42" "$1: CREATE EXTENSION shardid and an id of shard 42"
	cluster_stop "smoke$2"
}
