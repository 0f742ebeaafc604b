# Copyright (c) 2026, the snowflake authors
#
# A standby that cannot write its mark file while it replays the primary's
# marks.  Replay must go on, and the standby keep serving read-only
# queries: a 40-byte file must not take a standby down.  The replayed mark
# is kept in memory, so that after a promotion no ID falls below it; but
# since it is not on disk, the promoted standby writes a new mark before it
# issues any ID, and refuses to generate as long as it cannot.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $primary = snowflake_node(
	'primary',
	allows_streaming => 1,
	extra_conf => "log_min_messages = warning\n");
start_node($primary);
$primary->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY);
INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 1000);
});
$primary->backup('backup');
my $standby = snowflake_standby($primary, 'backup', 'standby');
start_node($standby);
$primary->wait_for_catchup($standby);

# A directory in the way of the standby's temporary mark file.  The log is
# read from before it, since a mark the primary wrote earlier may be
# replayed, and fail, at once.  A file of that name may be there already:
# the base backup may have copied the primary's, or the standby may be
# writing a mark it replays; it is removed until the directory takes its
# place.
my $log_offset = -s $standby->logfile;
my $temp_file = $standby->data_dir . '/snowflake.mark.tmp';
foreach my $try (1 .. 100)
{
	last if mkdir $temp_file;
	die "could not create $temp_file: $!" if !$!{EEXIST} || $try == 100;
	unlink $temp_file if -f $temp_file;
}

# Two seconds of IDs on the primary: several new marks to replay.
$primary->safe_psql('postgres', q{
INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 1000);
SELECT pg_sleep(1);
INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 1000);
SELECT pg_sleep(1);
INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 1000);
});
$primary->wait_for_catchup($standby);

ok( $standby->log_contains(
		qr/WARNING:  could not create file "snowflake\.mark\.tmp": Is a directory/,
		$log_offset),
	'the standby warns that it cannot write its mark');
ok( $standby->log_contains(
		qr/WARNING:  snowflake high-water mark replayed from WAL is not on disk/,
		$log_offset),
	'... and that the replayed mark is kept in memory');
ok(!$standby->log_contains(qr/FATAL|PANIC/, $log_offset),
	'... but does not stop');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	'4000', 'the standby replayed everything and serves read-only queries');

# Failover while the file still cannot be written.
my $old_max = $primary->safe_psql('postgres', 'SELECT max(id) FROM ids');
$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
my ($elapsed, $ret, $stdout, $stderr) =
  psql_timed($standby, 'INSERT INTO ids SELECT snowflake_next_id()');
isnt($ret, 0,
	'the promoted standby refuses to generate while its mark cannot be written'
);
like(
	$stderr,
	qr/ERROR:  42809: could not create file "snowflake\.mark\.tmp": Is a directory/,
	'... saying why');

rmdir $temp_file or die "could not remove $temp_file: $!";
my $id = $standby->safe_psql('postgres',
	"SET snowflake.max_lead = 5000;\nINSERT INTO ids SELECT snowflake_next_id() RETURNING id"
);
cmp_ok($id, '>', $old_max,
	'once it can, it generates IDs above every ID of the old primary');
cmp_ok(read_mark_file($standby->data_dir . '/snowflake.mark')->{mark_ms},
	'>', id_ms($id), '... under a mark on disk');

$standby->stop;
done_testing();
