#!/bin/sh
# tools/man.sh PROGRAM: the man page of shardid's client program
# (shardid-move) in roff, on standard output, made from what PROGRAM --help
# and PROGRAM --version print, so that it cannot fall behind the program:
# src/move/Makefile runs it at build time and `make install` puts the page
# into $(pg_config --mandir)/man1.  POSIX sh and awk only: a PGXN user's
# `make` runs it too.  The help is read as it is laid out:
#   its first paragraph   NAME (the first sentence) and DESCRIPTION
#   "Usage:" lines        SYNOPSIS
#   "Options:" lines      OPTIONS: a line that starts with "-" names an
#                         option (its words that start with "-"), the lines
#                         below it, indented, describe it
#   "Heading: text"       after the options, a section of its own
#                         ("Exit status:" is EXIT STATUS)
# and the last word of --version is the version in the page's header.
set -eu
program=${1:?usage: tools/man.sh PROGRAM}
name=$(basename "$program")
help=$("$program" --help)
version=$("$program" --version | awk '{ v = $NF } END { print v }')
[ -n "$help" ] && [ -n "$version" ] || {
	echo "tools/man.sh: $program printed no help or no version" >&2
	exit 1
}
manual=""
[ -f "$(dirname "$0")/../doc/$name.md" ] && manual="doc/$name.md"

printf '%s\n' "$help" | awk -v name="$name" -v version="$version" -v manual="$manual" '
# s with every occurrence of the string a replaced by b (no regular
# expressions, so that backslashes stay as written)
function replace(s, a, b,    out, i) {
	out = ""
	while ((i = index(s, a)) > 0) {
		out = out substr(s, 1, i - 1) b
		s = substr(s, i + length(a))
	}
	return out s
}
# roff text: a backslash shown as one, a "-" that starts a word (an option:
# after a space, "(", "[", "|", "," or another such "-") a minus sign, as
# man-pages(7) asks, and a leading dot or quote taken as text
function esc(s,    out, i, c, prev) {
	s = replace(s, "\\", "\\e")
	out = ""
	prev = " "
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "-" && (prev ~ /[ ([|,]/ || minus))
		{
			out = out "\\-"
			minus = 1
		}
		else
		{
			out = out c
			minus = 0
		}
		prev = c
	}
	minus = 0
	if (out ~ /^[.'\'']/)
		out = "\\&" out
	return replace(out, name, command(name))
}
# a command or an option, to be typed as it is written: every "-" a minus
function command(s) {
	return replace(replace(s, "\\", "\\e"), "-", "\\-")
}
# runs of capitals (N, CONNINFO, SIZE) in italics
function caps(s,    out) {
	out = ""
	while (match(s, /[A-Z]+/)) {
		out = out substr(s, 1, RSTART - 1) "\\fI" substr(s, RSTART, RLENGTH) "\\fR"
		s = substr(s, RSTART + RLENGTH)
	}
	return out s
}
# an option or a synopsis: the program and each -x or --name in bold, a
# value after "=" and the other words in capitals in italics
function opt(s,    out, n, w, i, eq, comma) {
	n = split(s, w, " ")
	out = ""
	for (i = 1; i <= n; i++) {
		if (w[i] ~ /^-/) {
			comma = ""
			if (w[i] ~ /,$/) {
				comma = ","
				w[i] = substr(w[i], 1, length(w[i]) - 1)
			}
			eq = index(w[i], "=")
			if (eq)
				w[i] = "\\fB" command(substr(w[i], 1, eq - 1)) "\\fR=" caps(esc(substr(w[i], eq + 1)))
			else
				w[i] = "\\fB" command(w[i]) "\\fR"
			w[i] = w[i] comma
		} else if (w[i] == name)
			w[i] = "\\fB" command(w[i]) "\\fR"
		else
			w[i] = caps(esc(w[i]))
		out = out (i > 1 ? " " : "") w[i]
	}
	return out
}
function end_option() {
	if (spec != "") {
		options++
		ospec[options] = spec
		otext[options] = text
	}
	spec = ""
	text = ""
}
BEGIN { part = "description" }
/^Usage:/ { part = "usage"; next }
/^Options:/ { part = "options"; next }
/^[ \t]*$/ {
	if (part == "options")
		end_option()
	if (part != "description" || description != "")
		part = "after"
	next
}
part == "description" { description = description (description == "" ? "" : " ") $0; next }
part == "usage" { sub(/^ +/, ""); synopsis[++synopses] = $0; next }
part == "options" {
	if ($0 ~ /^ +-/) {
		end_option()
		n = split($0, w, " ")
		for (i = 1; i <= n && w[i] ~ /^-/; i++)
			spec = spec (spec == "" ? "" : " ") w[i]
		for (; i <= n; i++)
			text = text (text == "" ? "" : " ") w[i]
	} else {
		sub(/^ +/, "")
		text = text " " $0
	}
	next
}
part == "after" && match($0, /^[A-Z][a-z]+( [a-z]+)*: /) {
	sections++
	heading[sections] = toupper(substr($0, 1, RLENGTH - 2))
	body[sections] = substr($0, RLENGTH + 1)
	part = "section"
	next
}
part == "section" { body[sections] = body[sections] " " $0; next }
part == "after" { extra = extra (extra == "" ? "" : " ") $0; next }
END {
	end_option()
	if (description == "" || synopses == 0 || options == 0) {
		print "tools/man.sh: the help has no first paragraph, Usage: or Options:" > "/dev/stderr"
		exit 1
	}
	what = description
	if (index(what, name " ") == 1)
		what = substr(what, length(name) + 2)
	if ((i = index(what, ". ")) > 0)
		what = substr(what, 1, i - 1)
	sub(/\.$/, "", what)

	print ".\\\" " name ".1: made by tools/man.sh from " name " --help; edit the help, not this page"
	print ".TH " toupper(name) " 1 \"\" \"shardid " version "\" \"shardid\""
	print ".SH NAME"
	print command(name) " \\- " esc(what)
	print ".SH SYNOPSIS"
	for (i = 1; i <= synopses; i++)
		print opt(synopsis[i]) (i < synopses ? "\n.br" : "")
	print ".SH DESCRIPTION"
	print esc(description)
	if (extra != "")
		print ".PP\n" esc(extra)
	print ".SH OPTIONS"
	for (i = 1; i <= options; i++)
		print ".TP\n" opt(ospec[i]) "\n" esc(otext[i])
	for (i = 1; i <= sections; i++)
		print ".SH \"" heading[i] "\"\n" esc(body[i])
	if (manual != "") {
		print ".SH \"SEE ALSO\""
		print "The manual of " esc(name) ": \\%" esc(manual) " in shardid'\''s source, and in the"
		print "documentation of its Debian package:\n.br\n\\%/usr/share/doc/postgresql\\-\\fIMAJOR\\fR\\-shardid/"
	}
}'
