# Makefile for shardid (PGXS)

EXTENSION = shardid

MODULE_big = shardid
OBJS = src/shardid.o src/shared.o src/stored.o src/floor.o src/feed.o src/mark.o src/session.o src/settings.o src/clock.o src/catalog.o src/convert.o src/citus.o

# The current SQL is kept once, in src/sql/shardid.sql; make builds from it
# the install script of the release in shardid.control, with sections 0 and
# 9 of 1.1--1.2.  Every SQL change of 1.4 is also written, as a delta, into
# the update shardid--1.3--1.4.sql (which starts and ends with those two
# sections, copied: an update script cannot include a file).  The released
# scripts (1.0, 1.0--1.1, 1.1--1.2, 1.2--1.3) never change; make builds from
# them the install scripts of 1.1 and 1.2 and the direct update from 1.0 to
# 1.2, whose first statements are section 0 of 1.1--1.2 (see that file).
# Version 1.3 has no install script of its own: CREATE EXTENSION shardid
# VERSION '1.3' installs 1.2 and runs the released update to 1.3.
EXTVERSION := $(shell sed -n "s/^default_version = '\(.*\)'$$/\1/p" $(EXTENSION).control)
DATA = $(EXTENSION)--1.0.sql $(EXTENSION)--1.0--1.1.sql $(EXTENSION)--1.1--1.2.sql \
	$(EXTENSION)--1.2--1.3.sql $(EXTENSION)--1.3--1.4.sql $(EXTENSION)--1.0.control
DATA_built = $(EXTENSION)--1.1.sql $(EXTENSION)--1.2.sql $(EXTENSION)--1.0--1.2.sql \
	$(EXTENSION)--$(EXTVERSION).sql

TESTS = $(wildcard sql/*.sql)
REGRESS = $(patsubst sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --inputdir=. --load-extension=$(EXTENSION)

PG_CFLAGS += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
ifdef CI
PG_CFLAGS += -Werror
endif
# make SANITIZE=1: undefined-behaviour sanitizer build, for test/sanitize.sh
ifdef SANITIZE
PG_CFLAGS += -O1 -fsanitize=undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SHLIB_LINK += -fsanitize=undefined
endif

EXTRA_CLEAN = results regression.diffs regression.out test/tmp

# What the build needs before compiling: pg_config, PGXS and the server
# headers (on Debian, pgxs.mk comes with postgresql-client-NN, the headers
# only with postgresql-server-dev-NN)
PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
PG_SERVER_H := $(shell $(PG_CONFIG) --includedir-server 2>/dev/null)/postgres.h
PG_MAJOR := $(shell $(PG_CONFIG) --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
ifeq ($(PGXS),)
BUILD_MISSING = $(PG_CONFIG) (PostgreSQL's pg_config)
else ifeq ($(wildcard $(PGXS)),)
BUILD_MISSING = $(PGXS)
else ifeq ($(wildcard $(PG_SERVER_H)),)
BUILD_MISSING = $(PG_SERVER_H) (PostgreSQL's server headers)
endif
ifeq ($(BUILD_MISSING),)
include $(PGXS)
else
all install installcheck:
	@echo "shardid cannot be built: $(BUILD_MISSING) not found." >&2; \
	echo "On Debian/Ubuntu: apt-get install postgresql-server-dev-$(or $(PG_MAJOR),15)" \
	     "(or 'make deps' as root); elsewhere set PG_CONFIG=/path/to/pg_config." >&2; exit 1
endif

# make installcheck, against the running server libpq reaches: sql/, and
# first the suite of the mode shardid runs in there, test/strict/sql with
# its shared memory (preloaded, or PostgreSQL 17+), else test/session/sql;
# the server may set any shardid.epoch (doc/development.md).
# What needs servers of its own (restarts, crashes, clocks, replicas,
# moves) runs in make test.
ifeq ($(BUILD_MISSING),)
installcheck: installcheck-mode
endif
SERVER_MODE_SQL = SELECT CASE WHEN 'shardid' = ANY (string_to_array(replace(current_setting('shared_preload_libraries'), ' ', ''), ',')) OR current_setting('server_version_num')::int >= 170000 THEN 'strict' ELSE 'session' END
installcheck-mode:
	@mode=$$('$(bindir)/psql' -X -At -d postgres -c "$(SERVER_MODE_SQL)") || exit 1; \
	echo "test/$$mode/sql: the suite of the server's mode"; \
	mkdir -p test/tmp/installcheck-$$mode && \
	$(pg_regress_installcheck) --inputdir=test/$$mode --outputdir=test/tmp/installcheck-$$mode \
		--load-extension=$(EXTENSION) --dbname=shardid_regression \
		$$(cd test/$$mode/sql && ls *.sql | sed 's/\.sql$$//')
.PHONY: installcheck-mode

$(EXTENSION)--1.1.sql: $(EXTENSION)--1.0.sql $(EXTENSION)--1.0--1.1.sql
	{ echo '/* $@: made by make from $^; edit those */'; cat $^; } >$@

# section 0 of the 1.1--1.2 update, and the rest of it
SECTION0_END = ^-- end of section 0
$(EXTENSION)--1.2.sql: $(EXTENSION)--1.1--1.2.sql $(EXTENSION)--1.0.sql $(EXTENSION)--1.0--1.1.sql
	{ echo '/* $@: made by make from $^; edit those */'; \
	  sed -n '1,/$(SECTION0_END)/p' $<; cat $(EXTENSION)--1.0.sql $(EXTENSION)--1.0--1.1.sql; \
	  sed '1,/$(SECTION0_END)/d' $<; } >$@
$(EXTENSION)--1.0--1.2.sql: $(EXTENSION)--1.1--1.2.sql $(EXTENSION)--1.0--1.1.sql
	{ echo '/* $@: made by make from $^; edit those */'; \
	  sed -n '1,/$(SECTION0_END)/p' $<; cat $(EXTENSION)--1.0--1.1.sql; \
	  sed '1,/$(SECTION0_END)/d' $<; } >$@

# From 1.3 on the install script is section 0 of 1.1--1.2 (the check of
# schema shardid), src/sql/shardid.sql, then section 9 of 1.1--1.2 (the last
# privileges and checks), taken from that released script.
# $(call sql_script,<command it is for>,<its part>) writes it.
SECTION0 = sed -n '/^-- 0\. /{x;p;x;}; h; /^-- 0\. /,/^\$$section0\$$;/p' $(EXTENSION)--1.1--1.2.sql
SECTION9 = sed -n '/^-- 9\. /{x;p;x;}; h; /^-- 9\. /,$$p' $(EXTENSION)--1.1--1.2.sql
define sql_script
{ printf '%s\n' '/* $@: made by make from $(2) and sections 0 and 9 of $(EXTENSION)--1.1--1.2.sql; edit those */' '' \
	'-- complain if script is sourced in psql, rather than via $(word 1,$(1)) EXTENSION' \
	"\\echo Use \"$(1)\" to load this file. \\quit" ''; \
  $(SECTION0); echo; cat $(2); echo; $(SECTION9); } >$@
endef
$(EXTENSION)--$(EXTVERSION).sql: src/sql/shardid.sql $(EXTENSION)--1.1--1.2.sql
	$(call sql_script,CREATE EXTENSION shardid,$<)

# shardid-move, the client program that moves a shard, has its own PGXS
# Makefile in src/move
ifeq ($(BUILD_MISSING),)
all: move
install: install-move
uninstall: uninstall-move
clean: clean-move
endif
move install-move uninstall-move clean-move:
	$(MAKE) -C src/move PG_CONFIG=$(PG_CONFIG) $(patsubst move,all,$(patsubst %-move,%,$@))

.PHONY: move install-move uninstall-move clean-move
.PHONY: deps check-deps demo test bench bench-scale unit sanitize soak deb dist

# Debian packages the build and the suites need (root, apt-get); see
# tools/deps.sh.  The one target that installs packages, with demo (a
# newcomer's first command); the others check and name what is missing.
deps:
	PG_CONFIG=$(PG_CONFIG) tools/deps.sh
check-deps:
	@PG_CONFIG=$(PG_CONFIG) tools/deps.sh --check

# quietly: the build says nothing but warnings and errors
demo: deps
	@echo "building and installing shardid into $$($(PG_CONFIG) --bindir)/.."
	@$(MAKE) -s install >/dev/null
	@PG_CONFIG=$(PG_CONFIG) tools/demo.sh

# the whole suite against the server PG_CONFIG names:
#   make test PG_CONFIG=/path/to/pg_config
test: check-deps
	$(MAKE) install
	PG_CONFIG=$(PG_CONFIG) test/run.sh

bench:
	PG_CONFIG=$(PG_CONFIG) tools/deps.sh --check bench
	$(MAKE) install
	PG_CONFIG=$(PG_CONFIG) test/bench/bench.sh

# thousands of logical shards beside bigserial (test/bench/scale.sh):
#   make bench-scale [SHARDS="500 2000 8192"] [TABLES=5] [DUMP=0 to skip pg_dump]
bench-scale:
	PG_CONFIG=$(PG_CONFIG) tools/deps.sh --check bench
	$(MAKE) install
	SHARDS="$${SHARDS:-500 2000}" PG_CONFIG=$(PG_CONFIG) test/bench/scale.sh

# parts of `make test` on their own; unit needs a C compiler and nothing else
unit:
	test/unit/run.sh

# the randomized fault schedule of test/failover/schedule.sh, long:
#   make soak [SCHEDULE_ROUNDS=n] [SCHEDULE_SEED=n]; prints the seed of a failure
soak: check-deps
	$(MAKE) install
	SCHEDULE_ROUNDS=$${SCHEDULE_ROUNDS:-40} PG_CONFIG=$(PG_CONFIG) bash test/failover/schedule.sh

sanitize: check-deps
	PG_CONFIG=$(PG_CONFIG) test/sanitize.sh

# packages: the Debian packages postgresql-MAJOR-shardid into dist/ (after
# `make deps`), and the PGXN release file dist/shardid-X.Y.Z.zip
deb:
	tools/deb.sh dist
dist:
	tools/dist.sh dist
