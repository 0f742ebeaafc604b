# snowflake: Twitter-Snowflake IDs generated inside PostgreSQL

EXTENSION = snowflake
EXTVERSION = 1.1

MODULE_big = snowflake
OBJS = snowflake.o registry.o
DATA = snowflake--1.0.sql snowflake--$(EXTVERSION).sql snowflake--1.0--1.1.sql
PGFILEDESC = "snowflake - Twitter-Snowflake IDs generated inside PostgreSQL"

# Tests run against throwaway servers that pg_regress starts itself.
REGRESS = layout generate errors
REGRESS_OPTS = --temp-instance=./tmp_check --temp-config=./test/preload.conf
ISOLATION = interleave
ISOLATION_OPTS = --temp-instance=./tmp_check_iso --temp-config=./test/preload.conf
TAP_TESTS = 1

# Tests that need a server without the preload.
NOPRELOAD_REGRESS = nopreload registry

PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter

# the registry worker is a libpq client, as contrib/dblink is
PG_CPPFLAGS = -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL = $(libpq)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

.PHONY: installcheck-nopreload
installcheck-nopreload:
	mkdir -p ./output_nopreload
	$(pg_regress_installcheck) --temp-instance=./tmp_check_nopreload \
		--temp-config=./test/nopreload.conf \
		--outputdir=./output_nopreload $(NOPRELOAD_REGRESS)

EXTRA_CLEAN = tmp_check_nopreload output_nopreload tmp_check_iso output_iso
