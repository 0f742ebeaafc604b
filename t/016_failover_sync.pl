# Copyright (c) 2026, the snowflake authors
#
# Failover with a synchronous standby, IDs handed out by SELECT alone.
#
# A transaction that only calls snowflake_next_id() writes nothing and so
# commits without waiting for any WAL: the only thing that tells a standby
# about its IDs is the WAL-logged high-water mark.  With a synchronous
# standby the mark must therefore be flushed and confirmed before any ID
# under it is returned, as a commit would be.  wal_writer_delay = 10s keeps
# the WAL writer from flushing the mark by chance, so only the extension's
# own flush and wait can pass this test.  The standby's clock is 10 s
# behind, so after promotion only the mark keeps its IDs above the old ones.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(usleep);

skip_without_libfaketime();

my $primary = snowflake_node(
	'primary',
	allows_streaming => 1,
	extra_conf => "wal_writer_delay = 10s\n");
start_node($primary);
$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$primary->backup('backup');

my $standby =
  snowflake_standby($primary, 'backup', 'standby', offset => -10);
start_node($standby);
check_clock_offset($standby, -10, 'the standby\'s clock is 10 s behind');

alter_system($primary, synchronous_standby_names => '*');
$primary->poll_query_until('postgres',
	"SELECT sync_state = 'sync' FROM pg_stat_replication")
  or die "the standby did not become synchronous";

# IDs returned by SELECT alone, spread over 3 s so that they cross several
# marks; the last of them lies beyond any mark the standby had before.
my $max_returned = 0;
for my $i (1 .. 30)
{
	my $id = $primary->safe_psql('postgres', 'SELECT snowflake_next_id()');
	$max_returned = $id if $id > $max_returned;
	usleep(100_000);
}
# While the synchronous standby does not confirm, no mark is published, so
# generation stops within a stride, as commits do; and like a commit's wait,
# this one can be cancelled.
alter_system($primary, synchronous_standby_names => 'nosuch');
usleep(1_500_000);
my ($ret, $stdout, $stderr) = $primary->psql('postgres',
	"SET statement_timeout = '2s';\n\\set VERBOSITY verbose\nSELECT snowflake_next_id()");
isnt($ret, 0, 'without the synchronous standby\'s confirmation, no ID');
like($stderr, qr/ERROR:  57014: canceling statement due to statement timeout/,
	'and the wait for it can be cancelled');
is($stdout, '', 'the cancelled call returned no ID');
alter_system($primary, synchronous_standby_names => '*');
$primary->poll_query_until('postgres',
	"SELECT sync_state = 'sync' FROM pg_stat_replication")
  or die "the standby did not become synchronous again";
my $after = $primary->safe_psql('postgres', 'SELECT snowflake_next_id()');
cmp_ok($after, '>', $max_returned,
	'once the standby confirms again, generation goes on');
$max_returned = $after;

# The confirmation means the standby flushed the mark's WAL; it writes its
# own mark file when it replays that WAL, which may come a moment later.  So
# wait for it to replay what it had received when the ID was returned, no
# further: a later mark must not stand in for the one the ID waited on.
my $received =
  $standby->safe_psql('postgres', 'SELECT pg_last_wal_receive_lsn()');
$standby->poll_query_until('postgres',
	"SELECT pg_last_wal_replay_lsn() >= '$received'::pg_lsn")
  or die "the standby did not replay the WAL it had received";
my $standby_mark = read_mark_file($standby->data_dir . '/snowflake.mark');
cmp_ok($standby_mark->{mark_ms}, '>', id_ms($max_returned),
	'the standby\'s own mark lies above every ID the primary returned');

crash_node($primary);
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die "the standby was not promoted";

my $new = $standby->safe_psql('postgres',
	'SET snowflake.max_lead = 20000; SELECT snowflake_next_id()');
cmp_ok($new, '>', $max_returned,
	'after promotion the first ID is above every ID the old primary returned'
);

$standby->stop;
done_testing();
