#!/usr/bin/env python3
# test/packages/meta_spec.py DIR: DIR/META.json against PGXN's Meta Spec
# 1.0.0 (https://pgxn.org/spec/, and the JSON Schema of its v1 that PGXN's
# tools validate with): the required keys, semantic versions, the release
# status, known licenses, terms and tags, prereqs and their version ranges,
# resources, custom keys (x_...), and the files provides names, which must
# be in DIR.  Prints one line per problem and exits 1 when there is one.
# test/tools/meta.sh runs it on the tree, test/packages/pgxn.sh on the
# unzipped release file.
import json
import os
import re
import sys

top = sys.argv[1]
m = json.load(open(os.path.join(top, "META.json")))
problems = []

SEMVER = r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?"
RANGE_ONE = r"(([=!]=|[<>]=?)\s*)?(" + SEMVER + r"|0)"
LICENSES = {"agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd",
            "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit",
            "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay",
            "sun", "zlib", "open_source", "restricted", "unrestricted", "unknown"}


def problem(where, what):
    problems.append("%s: %s" % (where, what))


def semver(v):
    return isinstance(v, str) and re.fullmatch(SEMVER, v) is not None


def term(s):
    return isinstance(s, str) and re.fullmatch(r"[^/\\\s\x00-\x1f\x7f]{2,}", s) is not None


def url(s):
    return isinstance(s, str) and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s]+\S*", s) is not None


def custom(key):
    return re.fullmatch(r"[xX]_.+", key) is not None


def only(where, obj, keys):
    """obj is a map whose keys are among keys, or custom"""
    if not isinstance(obj, dict):
        problem(where, "is not a map")
        return False
    for k in obj:
        if k not in keys and not custom(k):
            problem(where, "unknown key %r (custom keys start with x_)" % k)
    return True


only("META.json", m, {"name", "abstract", "description", "version", "maintainer", "license",
                      "provides", "prereqs", "meta-spec", "generated_by", "release_status",
                      "resources", "tags", "no_index"})
for key in ("name", "abstract", "maintainer", "license", "provides", "version", "meta-spec"):
    if key not in m:
        problem("META.json", "no " + key + " (required)")

if "name" in m and not term(m["name"]):
    problem("name", "%r is not a term (2 characters or more, no space, slash or backslash)" % m["name"])
for key in ("abstract", "description", "generated_by"):
    if key in m and (not isinstance(m[key], str) or not m[key]):
        problem(key, "is not a non-empty string")
if "version" in m and not semver(m["version"]):
    problem("version", "%r is not a semantic version" % m["version"])
if only("meta-spec", m.get("meta-spec", {}), {"version", "url"}):
    if not re.fullmatch(r"1\.0\.\d+", str(m.get("meta-spec", {}).get("version"))):
        problem("meta-spec.version", "is not 1.0.x")
    if m.get("meta-spec", {}).get("url", "https://pgxn.org/meta/spec.txt") not in (
            "https://pgxn.org/meta/spec.txt", "http://pgxn.org/meta/spec.txt"):
        problem("meta-spec.url", "is not https://pgxn.org/meta/spec.txt")
if m.get("release_status", "stable") not in ("stable", "testing", "unstable"):
    problem("release_status", "%r is not stable, testing or unstable" % m["release_status"])

maintainer = m.get("maintainer", "x")
if not (isinstance(maintainer, str) and maintainer) and not (
        isinstance(maintainer, list) and maintainer and all(isinstance(x, str) and x for x in maintainer)):
    problem("maintainer", "is not a string or a list of strings")

lic = m.get("license", "postgresql")
if isinstance(lic, str):
    lic = [lic]
if isinstance(lic, list):
    for x in lic:
        if x not in LICENSES:
            problem("license", "%r is not a license the spec knows (or give a map of names to URLs)" % x)
elif isinstance(lic, dict):
    for k, v in lic.items():
        if not url(v):
            problem("license.%s" % k, "%r is not a URL" % v)
else:
    problem("license", "is not a string, list or map")

provides = m.get("provides", {})
if not isinstance(provides, dict) or not provides:
    problem("provides", "is not a map of one extension or more")
else:
    for ext, p in provides.items():
        where = "provides.%s" % ext
        if not term(ext):
            problem(where, "the name is not a term")
        if not only(where, p, {"file", "version", "abstract", "docfile"}):
            continue
        if not semver(p.get("version")):
            problem(where + ".version", "%r is not a semantic version" % p.get("version"))
        if "file" not in p:
            problem(where, "has no file (required)")
        for key in ("file", "docfile"):
            if key in p and not os.path.isfile(os.path.join(top, p[key])):
                problem(where + "." + key, "%s is not a file of the distribution" % p[key])

prereqs = m.get("prereqs", {})
if only("prereqs", prereqs, {"configure", "build", "test", "runtime", "develop"}):
    for phase, rels in prereqs.items():
        if custom(phase) or not only("prereqs." + phase, rels, {"requires", "recommends", "suggests", "conflicts"}):
            continue
        for rel, reqs in rels.items():
            if custom(rel):
                continue
            where = "prereqs.%s.%s" % (phase, rel)
            if not isinstance(reqs, dict) or not reqs:
                problem(where, "is not a map of one prerequisite or more")
                continue
            for name, v in reqs.items():
                if not term(name):
                    problem(where, "%r is not a term" % name)
                if not re.fullmatch(RANGE_ONE + r"(\s*,\s*" + RANGE_ONE + r")*", str(v)):
                    problem(where + "." + name, "%r is not a version range" % v)

# resources: each one the project's own; the spec's schema wants one of
# homepage, bugtracker and repository in it (x_ keys alone are not enough)
resources = m.get("resources")
if resources is not None and only("resources", resources, {"homepage", "bugtracker", "repository"}):
    if not any(k in resources for k in ("homepage", "bugtracker", "repository")):
        problem("resources", "has none of homepage, bugtracker, repository: leave it out")
    if "homepage" in resources and not url(resources["homepage"]):
        problem("resources.homepage", "is not a URL")
    bt = resources.get("bugtracker")
    if bt is not None and only("resources.bugtracker", bt, {"web", "mailto"}):
        if "web" not in bt and "mailto" not in bt:
            problem("resources.bugtracker", "has neither web nor mailto")
        if "web" in bt and not url(bt["web"]):
            problem("resources.bugtracker.web", "is not a URL")
        if "mailto" in bt and not re.fullmatch(r"[^@\s]+@[^@\s]+", str(bt["mailto"])):
            problem("resources.bugtracker.mailto", "is not an email address")
    repo = resources.get("repository")
    if repo is not None and only("resources.repository", repo, {"url", "web", "type"}):
        if not ("web" in repo or ("url" in repo and "type" in repo)):
            problem("resources.repository", "needs web, or url and type")
        for key in ("url", "web"):
            if key in repo and not url(repo[key]):
                problem("resources.repository." + key, "is not a URL")
        if "type" in repo and not re.fullmatch(r"[a-z]+", str(repo["type"])):
            problem("resources.repository.type", "is not a lowercase word")

tags = m.get("tags", ["xx"])
if not isinstance(tags, list) or not tags or len(set(map(str, tags))) != len(tags):
    problem("tags", "is not a list of distinct tags")
else:
    for t in tags:
        if not isinstance(t, str) or not re.fullmatch(r"[^/\\\x00-\x1f\x7f]{2,255}", t):
            problem("tags", "%r is not a tag (2 to 255 characters, no slash or backslash)" % t)

no_index = m.get("no_index", {"file": []})
if only("no_index", no_index, {"file", "directory"}):
    for key, v in no_index.items():
        if not custom(key) and not (isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))):
            problem("no_index." + key, "is not a path or a list of paths")

for p in problems:
    print("META.json: " + p)
sys.exit(1 if problems else 0)
