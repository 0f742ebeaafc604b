# snowflake: Twitter-Snowflake IDs generated inside PostgreSQL

EXTENSION = snowflake snowflake_registry
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'$$/\1/p" $(srcdir)/snowflake.control)

MODULE_big = snowflake
# every C file of src/, one concern each
OBJS = $(patsubst $(srcdir)/%.c,%.o,$(wildcard $(srcdir)/src/*.c))
# A VPATH build (Debian's pg_buildext builds in build-<version>/) writes the
# objects into src/ of the build directory, which must exist.
ifdef VPATH
$(shell mkdir -p src)
endif
# every install and upgrade script of both extensions (the generator, and
# the registry of a fleet), relative to the source directory
DATA = $(notdir $(wildcard $(srcdir)/snowflake--*.sql $(srcdir)/snowflake_registry--*.sql))
PGFILEDESC = "snowflake - Twitter-Snowflake IDs generated inside PostgreSQL"

# Tests run against throwaway servers that pg_regress starts itself.
REGRESS = layout generate errors toolbox between partition migrate upgrade comments
REGRESS_OPTS = --temp-instance=./tmp_check --temp-config=$(srcdir)/test/preload.conf
ISOLATION = interleave registry_layout registry_drop registry_limit registry_allowance registry_epoch registry_lease
ISOLATION_OPTS = --temp-instance=./tmp_check_iso --temp-config=$(srcdir)/test/preload.conf
TAP_TESTS = 1

# Tests that need a server without the preload.
NOPRELOAD_REGRESS = nopreload registry registry_crash_promise

# Warnings are on for every build and errors for none but one: a packager's
# compiler must not fail on them.  CI turns them into errors on the command
# line (make PG_CFLAGS=-Werror, which this appends to), and builds once more
# with PG_CPPFLAGS=-DUSE_ASSERT_CHECKING.  The one is a function called
# without its declaration, as when a new major's headers no longer include
# the one that declares it: C then assumes it returns an int, which cuts a
# returned pointer to 32 bits, and the library crashes the server (as with
# heap_form_tuple on PostgreSQL 19) instead of failing to build.
override PG_CFLAGS += -Wall -Wextra -Wno-unused-parameter \
	-Werror=implicit-function-declaration

# The registry worker is a libpq client, as contrib/dblink is.  override, so
# that CI's PG_CPPFLAGS=-DUSE_ASSERT_CHECKING adds to this.
override PG_CPPFLAGS += -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL = $(libpq)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS passes the flags PostgreSQL was built with, and Debian builds it with
# gcc.  clang rejects -fexcess-precision=standard and does not know some of
# gcc's warning options, and PostgreSQL's headers mark printf-like functions
# gnu_printf, which clang ignores with a warning; drop those flags and that
# warning, so that make CC=clang builds cleanly.
ifneq (,$(findstring clang,$(shell $(CC) --version 2>/dev/null)))
override CFLAGS := $(filter-out -fexcess-precision=standard -Wimplicit-fallthrough=3 \
	-Wno-format-truncation -Wno-stringop-truncation,$(CFLAGS)) \
	-Wimplicit-fallthrough -Wno-ignored-attributes
endif

.PHONY: installcheck-nopreload dist
installcheck-nopreload:
	mkdir -p ./output_nopreload
	$(pg_regress_installcheck) --temp-instance=./tmp_check_nopreload \
		--temp-config=$(srcdir)/test/nopreload.conf \
		--outputdir=./output_nopreload $(NOPRELOAD_REGRESS)

# The PGXN upload: the committed tree as snowflake-<version>.zip.
dist:
	git archive --format zip --prefix=snowflake-$(EXTVERSION)/ \
		--output snowflake-$(EXTVERSION).zip HEAD

EXTRA_CLEAN = tmp_check_nopreload output_nopreload tmp_check_iso output_iso
