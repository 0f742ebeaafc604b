
# Copyright (c) 2026, the snowflake authors

# pg_partman (Debian's postgresql-15-partman, pg_partman 4) on a table
# partitioned by range of id, by the recipe of docs/partitioning.md's
# section "pg_partman", read from the page as it stands.  Its interval of a
# day, snowflake_min_id(epoch + 24 hours), puts every bound on a whole day
# from the epoch: at the epoch's time of day (01:42:54.657 UTC with
# Twitter's), or at midnight UTC on a server whose epoch is at midnight.
# New IDs land in their partitions and maintenance keeps to those days.
# What pg_partman cannot do, as the page says: create_parent rounds a start
# at midnight down to a day of the epoch, and partitions made at midnight by
# hand, which run_maintenance keeps, are lost to the epoch's days again by
# partition_data_id.  Skipped where pg_partman 4 is not installed (as on
# PostgreSQL 18, which Debian 12 has no pg_partman for).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# the pg_config of the PostgreSQL under test, as PostgreSQL::Test::Cluster
# finds it, on PATH
chomp(my $sharedir = `pg_config --sharedir`);
my $control = "$sharedir/extension/pg_partman.control";
plan skip_all =>
  "pg_partman is not installed for this PostgreSQL (Debian 12 has it for 15 only: postgresql-15-partman)"
  unless -f $control;
my ($partman_version) = slurp_file($control) =~ /^default_version\s*=\s*'([^']+)'/m;
plan skip_all =>
  "this test is written for pg_partman 4 (Debian 12's), not $partman_version"
  unless ($partman_version // '') =~ /^4\./;

# docs/partitioning.md's pg_partman recipe
my $doc = slurp_file("$FindBin::RealBin/../docs/partitioning.md");
my ($recipe) = $doc =~ /^```sql\n(CREATE SCHEMA partman;\n.*?)^```$/ms
  or die 'docs/partitioning.md has no pg_partman recipe';

# One line per partition of the parent, in order: the bounds as IDs and as
# times (UTC), and whether they are the first IDs of their milliseconds.
sub partitions
{
	my ($node, $parent) = @_;
	return $node->safe_psql(
		'postgres', qq{
SET TimeZone = 'UTC';
SELECT string_agg(format('%s %s %s %s', lo, hi, snowflake_timestamp(lo), snowflake_timestamp(hi)),
	E'\\n' ORDER BY lo)
FROM (SELECT substring(b from 'FROM \\(''(\\d+)''\\)')::bigint AS lo,
			 substring(b from 'TO \\(''(\\d+)''\\)')::bigint AS hi
	  FROM (SELECT pg_get_expr(c.relpartbound, c.oid) AS b
			FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			WHERE i.inhparent = '$parent'::regclass) p
	  WHERE b <> 'DEFAULT') q});
}

# "t" if every partition of parent runs a day (day_ids IDs), from a bound
# that is the first ID of its millisecond, to where the next one starts,
# with each bound's time on whole days from the time "from_time" (a SQL
# expression)
sub days_from
{
	my ($node, $parent, $from_time) = @_;
	return $node->safe_psql(
		'postgres', qq{
SET TimeZone = 'UTC';
WITH b AS (
	SELECT substring(pg_get_expr(c.relpartbound, c.oid) from 'FROM \\(''(\\d+)''\\)')::bigint AS lo,
		   substring(pg_get_expr(c.relpartbound, c.oid) from 'TO \\(''(\\d+)''\\)')::bigint AS hi
	FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	WHERE i.inhparent = '$parent'::regclass
	  AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'),
day AS (SELECT snowflake_min_id(current_setting('snowflake.epoch')::timestamptz
								+ interval '24 hours') AS ids)
SELECT count(*) >= 3
	AND bool_and(hi - lo = day.ids)
	AND bool_and(lo = snowflake_min_id(snowflake_timestamp(lo)))
	AND bool_and(extract(epoch FROM snowflake_timestamp(lo) - ($from_time)) % 86400 = 0)
	AND count(*) = count(DISTINCT lo)
	AND max(hi) - min(lo) = count(*) * day.ids
FROM b, day GROUP BY day.ids});
}

# --- Twitter's epoch, 2010-11-04 01:42:54.657 UTC ---
my $twitter = snowflake_node('partman_twitter');
start_node($twitter);
$twitter->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$twitter->safe_psql('postgres', $recipe);
is( $twitter->safe_psql(
		'postgres',
		q{SELECT partition_interval = (86400000::bigint << 22)::text
		  FROM partman.part_config WHERE parent_table = 'public.events'}),
	't',
	"pg_partman's interval is a day of IDs of Twitter's layout, 86400000 x 2^22");
is(days_from($twitter, 'events', "current_setting('snowflake.epoch')::timestamptz"),
	't', 'every partition runs a whole day from the epoch to the next');
is( $twitter->safe_psql(
		'postgres', q{
SET TimeZone = 'UTC';
SELECT DISTINCT to_char(snowflake_timestamp(from_id), 'HH24:MI:SS.MS')
FROM (SELECT substring(pg_get_expr(c.relpartbound, c.oid) from 'FROM \(''(\d+)''\)')::bigint AS from_id
	  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	  WHERE i.inhparent = 'events'::regclass) p
WHERE from_id IS NOT NULL}),
	'01:42:54.657',
	"with Twitter's epoch every bound is at its time of day, 01:42:54.657 UTC, not at midnight");

# new IDs land in the partition whose bounds hold their time
is( $twitter->safe_psql(
		'postgres', q{
INSERT INTO events (payload) SELECT 'new' FROM generate_series(1, 100);
SELECT count(*) FILTER (WHERE e.tableoid::regclass::text <> 'events_default'
	AND pg_get_expr(c.relpartbound, c.oid) LIKE 'FOR VALUES FROM%')
FROM events e JOIN pg_class c ON c.oid = e.tableoid}),
	'100',
	'new IDs land in the partitions pg_partman made, none in the default one');
my $before = partitions($twitter, 'events');
$twitter->safe_psql(
	'postgres', q{
INSERT INTO events (id, payload)
SELECT max(id) + (snowflake_min_id(current_setting('snowflake.epoch')::timestamptz + interval '24 hours')) * 3, 'later'
FROM events;
SELECT partman.run_maintenance('public.events');});
my $after = partitions($twitter, 'events');
ok(length($after) > length($before),
	'run_maintenance makes partitions ahead of an ID three days later');
is(days_from($twitter, 'events', "current_setting('snowflake.epoch')::timestamptz"),
	't', 'and they too run whole days from the epoch');

# create_parent rounds a start at midnight down to a day of the epoch
$twitter->safe_psql(
	'postgres', q{
CREATE TABLE from_midnight (LIKE events INCLUDING DEFAULTS) PARTITION BY RANGE (id);
SELECT partman.create_parent('public.from_midnight', 'id', 'native',
	snowflake_min_id(current_setting('snowflake.epoch')::timestamptz + interval '24 hours')::text,
	p_premake := 2,
	p_start_partition := snowflake_min_id('2026-11-01 00:00:00+00')::text);});
like(
	partitions($twitter, 'from_midnight'),
	qr/^\d+ \d+ 2026-10-31 01:42:54\.657\+00 2026-11-01 01:42:54\.657\+00$/m,
	'asked to start at midnight, pg_partman starts at 01:42:54.657 the day before');
unlike(partitions($twitter, 'from_midnight'),
	qr/ 00:00:00\+00 /, 'and none of its partitions starts at midnight');

# partitions made at midnight by hand: run_maintenance keeps to them, and
# partition_data_id leaves them
$twitter->safe_psql(
	'postgres', q{
SET TimeZone = 'UTC';
SELECT format('DROP TABLE %I', c.relname)
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'from_midnight'::regclass AND c.relname <> 'from_midnight_default' \gexec
SELECT partman.create_partition_id('public.from_midnight',
	ARRAY(SELECT from_id FROM snowflake_partition_bounds('2026-11-01', '2026-11-03')));
INSERT INTO from_midnight (id, payload)
SELECT snowflake_compose('2026-11-02 23:59:59.999+00', 31, 31, 4095), 'last of November 2';
SELECT partman.run_maintenance('public.from_midnight');});
is(days_from($twitter, 'from_midnight', "timestamptz '2026-11-01 00:00:00+00'"),
	't', 'run_maintenance goes on from partitions made at midnight UTC, at midnight');
like(
	partitions($twitter, 'from_midnight'),
	qr/^\d+ \d+ 2026-11-03 00:00:00\+00 2026-11-04 00:00:00\+00$/m,
	'its next partition starts at midnight of November 3');
$twitter->safe_psql(
	'postgres', q{
INSERT INTO from_midnight (id, payload)
SELECT snowflake_compose('2026-11-20 12:00:00+00', 0, 0, 0), 'in the default partition';
SELECT partman.partition_data_id('public.from_midnight');});
like(
	partitions($twitter, 'from_midnight'),
	qr/^\d+ \d+ 2026-11-20 01:42:54\.657\+00 2026-11-21 01:42:54\.657\+00$/m,
	'partition_data_id moves a row out of the default partition into a day of the epoch');

# --- an epoch at midnight UTC ---
my $midnight = snowflake_node(
	'partman_midnight', extra_conf => q{
snowflake.epoch = '2020-01-01 00:00:00+00'
});
start_node($midnight);
$midnight->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$midnight->safe_psql('postgres', $recipe);
is(days_from($midnight, 'events', "timestamptz '2020-01-01 00:00:00+00'"),
	't', 'with an epoch at midnight UTC, every partition runs from midnight to midnight');
is( $midnight->safe_psql(
		'postgres', q{
INSERT INTO events (payload) VALUES ('new');
SET TimeZone = 'UTC';
SELECT snowflake_timestamp(substring(pg_get_expr(c.relpartbound, c.oid) from 'FROM \(''(\d+)''\)')::bigint)
	= date_trunc('day', snowflake_timestamp(e.id))
FROM events e JOIN pg_class c ON c.oid = e.tableoid}),
	't',
	'a new ID lands in the partition of its UTC day');

done_testing();
