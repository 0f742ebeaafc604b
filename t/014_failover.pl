
# Copyright (c) 2026, the snowflake authors

# Failover to a standby whose clock is 10 s behind the primary's.
#
# A standby replays the primary's WAL-logged high-water marks (custom
# resource manager 146) into its own snowflake.mark.  After the primary dies
# and the standby is promoted, the new primary must issue only IDs greater
# than every ID the old primary committed, although its own clock reads 10 s
# earlier than those IDs.
#
# To make sure the test depends on the WAL-logged marks, the IDs committed
# on the primary go past the mark that the base backup copied to the standby,
# and the standby's clock is checked to be well below the last committed ID.
# Clocks are moved with libfaketime (see SnowflakeTest.pm).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $primary = faketime_node('primary',
	allows_streaming => 1,
	clock_test       => 'primary clock runs at the real time');

$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (
	n bigint GENERATED ALWAYS AS IDENTITY,
	id bigint NOT NULL,
	node text NOT NULL DEFAULT 'old primary');
INSERT INTO ids (id) SELECT snowflake_next_id() FROM generate_series(1, 1000);
});

$primary->backup('backup');
my $standby = snowflake_standby($primary, 'backup', 'standby', offset => -10);
my $backup_mark = read_mark_file($standby->data_dir . '/snowflake.mark');
ok($backup_mark->{crc_ok}, 'the base backup holds the primary\'s mark file');
start_node($standby);
check_clock_offset($standby, -10, 'standby clock is 10 s behind');

# Commit IDs on the primary for about 2.5 s, beyond the copied mark.
my $batch = q{
INSERT INTO ids (id) SELECT snowflake_next_id() FROM generate_series(1, 1000);
SELECT pg_sleep(0.1);
};
$primary->safe_psql('postgres', $batch x 25);
my $old_max = $primary->safe_psql('postgres', 'SELECT max(id) FROM ids');
cmp_ok(
	id_ms($old_max), '>',
	$backup_mark->{mark_ms},
	'the primary committed IDs above the mark in the base backup');

$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
is($standby->safe_psql('postgres', 'SELECT max(id) FROM ids'),
	$old_max, 'the standby has replayed every committed ID');

# The standby refuses to generate while in recovery.
my ($elapsed, $ret, $stdout, $stderr) =
  psql_timed($standby, 'SELECT snowflake_next_id()');
like(
	$stderr,
	qr/ERROR:  25006: cannot generate snowflake IDs during recovery/,
	'a standby refuses to generate IDs, with SQLSTATE 25006');

# It replayed the primary's marks into its own mark file.
my $standby_mark = read_mark_file($standby->data_dir . '/snowflake.mark');
ok($standby_mark->{crc_ok}, 'the standby\'s mark file is valid');
cmp_ok($standby_mark->{mark_ms},
	'>', id_ms($old_max),
	'the standby\'s mark file lies above the last committed ID');

# Without the replayed mark the standby's clock would put its IDs below the
# old primary's.
my $behind_s = $standby->safe_psql('postgres',
	"SELECT extract(epoch FROM (snowflake_parse($old_max)).ts - clock_timestamp())"
);
# (10 s less the time since that ID was made, which a loaded machine
# stretches)
cmp_ok($behind_s, '>', 5,
	'the standby\'s clock lies well below the last committed ID');

# The primary dies; the standby takes over.
crash_node($primary);
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die "the standby did not finish promotion";

# With the default settings the promoted standby waits 1 s for its clock and
# then refuses: it resumes above the replayed mark, about 10 s ahead.
($elapsed, $ret, $stdout, $stderr) =
  psql_timed($standby, 'SELECT snowflake_next_id()');
like(
	$stderr,
	qr/ERROR:  58000: could not generate a snowflake ID: the clock is behind/,
	'with default settings the promoted standby refuses: clock behind');

# With max_lead = 20 s it goes on.
($elapsed, $ret, $stdout, $stderr) = psql_timed(
	$standby, q{
SET snowflake.max_lead = 20000;
INSERT INTO ids (id, node)
	SELECT snowflake_next_id(), 'new primary' FROM generate_series(1, 10000);
});
is($ret, 0, 'with max_lead = 20 s the promoted standby generates IDs')
  or diag $stderr;

my $result = $standby->safe_psql(
	'postgres', qq{
SELECT count(*) FROM ids WHERE node = 'new primary';
SELECT min(id) > $old_max FROM ids WHERE node = 'new primary';
});
my ($new_count, $greater) = split /\n/, $result;
is($new_count, '10000', 'the new primary issued 10000 IDs');
is($greater, 't',
	'every ID of the new primary is greater than every ID committed on the old one'
);
check_strictly_increasing($standby, 'ids',
	'IDs strictly increase across the failover, in commit order');

done_testing();
