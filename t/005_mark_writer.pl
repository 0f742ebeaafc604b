# Copyright (c) 2026, the snowflake authors
#
# The mark writer: the background worker that keeps the durable high-water
# mark ahead of generation, so that generating backends do no I/O.
#
# Whatever the writer does, the mark on disk must always lie above every ID
# issued.  While IDs are being issued it keeps the mark ahead of the clock;
# when it is gone, backends write the mark themselves; it leaves cleanly on
# SIGTERM, as at every shutdown; and a standby runs none, since it generates
# nothing.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time usleep);

sub mark_ms
{
	my ($node) = @_;
	return read_mark_file($node->data_dir . '/snowflake.mark')->{mark_ms};
}

my $node = snowflake_node('writer', allows_streaming => 1);
start_node($node);
$node->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint)');

my $writer = mark_writer_pid($node, wait => 1);
ok(defined $writer, 'the mark writer runs on a primary');

# Sparse IDs for two seconds: each lies below the mark on disk.
my $below_mark = 0;
for my $i (1 .. 8)
{
	my $id = $node->safe_psql('postgres',
		'INSERT INTO ids SELECT snowflake_next_id() RETURNING id');
	$below_mark++ if id_ms($id) < mark_ms($node);
	usleep(250_000);
}
is($below_mark, 8, 'every ID lies below the mark on disk');

# 1.5 s after the last ID, longer than a stride, the mark is still ahead of
# the clock: the writer keeps it there while IDs are being issued, so that
# the next ID does not have to write it.
usleep(1_500_000);
my $clock_ms = $node->safe_psql('postgres',
	    'SELECT floor(1000 * extract(epoch FROM clock_timestamp()))::bigint - '
	  . SNOWFLAKE_EPOCH_UNIX_MS);
cmp_ok(mark_ms($node), '>', $clock_ms,
	'after a pause the mark is still ahead of the clock');

# Without the writer, backends write the mark themselves: IDs spread over
# more than a stride still go on, and stay below the mark.
signal_process('TERM', $writer, 'the mark writer');
my $deadline = time() + 10;
usleep(10_000) while kill(0, $writer) && time() < $deadline;
ok(!kill(0, $writer), 'the mark writer stopped');
my $mark_before = mark_ms($node);
$node->safe_psql('postgres', q{
INSERT INTO ids SELECT snowflake_next_id();
SELECT pg_sleep(1.2);
INSERT INTO ids SELECT snowflake_next_id();
});
my $last = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
cmp_ok(mark_ms($node), '>', $mark_before,
	'without the writer the mark still moves on');
cmp_ok(id_ms($last), '<', mark_ms($node),
	'... and stays above every ID');

# SIGTERM is how the postmaster stops it at shutdown: it leaves cleanly,
# without the FATAL that alerting would pick up, and is not started again
# until the server restarts.
ok( !$node->log_contains(
		qr/FATAL:  terminating background worker "snowflake mark writer"/),
	'the mark writer leaves on SIGTERM without a FATAL message');
usleep(1_500_000);
ok(!defined mark_writer_pid($node),
	'a mark writer ended by SIGTERM stays away until the next start');

is( $node->safe_psql(
		'postgres', q{
SELECT count(*) = count(DISTINCT id) FROM ids}),
	't',
	'all IDs distinct');

# A standby generates nothing, so it runs no writer.
$node->backup('backup');
my $standby = snowflake_standby($node, 'backup', 'writer_standby');
start_node($standby);
$node->wait_for_catchup($standby);
ok(!defined mark_writer_pid($standby), 'a standby runs no mark writer');

$standby->stop;

# A clean shutdown logs nothing alarming about the writer.
my $stop_offset = -s $node->logfile;
restart_node($node);
my $restarted_writer;
$deadline = time() + 10;
until (defined($restarted_writer = mark_writer_pid($node)) || time() > $deadline)
{
	usleep(100_000);
}
ok(defined $restarted_writer, 'a restart starts the mark writer again');
$node->stop;
ok( !$node->log_contains(qr/FATAL/, $stop_offset),
	'a clean shutdown and restart log no FATAL message');
start_node($node);

# A mark that cannot be written is an error, and no ID past the old mark is
# handed out.  After a restart the first ID needs a new mark; a directory in
# the way of the temporary file makes writing it fail.
my $max_before = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
$node->stop;
my $temp_file = $node->data_dir . '/snowflake.mark.tmp';
mkdir $temp_file or die "could not create $temp_file: $!";
start_node($node);
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT snowflake_next_id()");
isnt($ret, 0, 'no ID when the mark cannot be written');
like($stderr,
	qr/ERROR:  \w+: could not create file "snowflake.mark.tmp": Is a directory/,
	'the error names the file and the reason');
rmdir $temp_file or die "could not remove $temp_file: $!";
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_next_id()'),
	'>', $max_before, 'once the mark can be written, IDs go on');

# An epoch moved 10 s later makes the clock read fewer milliseconds than
# the IDs already issued.  A restart with it refuses to generate until the
# change is accepted; then IDs resume above every ID issued before (max_lead
# lets them go on at once).
$max_before = $node->safe_psql('postgres', 'SELECT snowflake_next_id()');
$node->append_conf('postgresql.conf',
	"snowflake.epoch = '2010-11-04 01:43:04.657+00'\nsnowflake.max_lead = 60000");
restart_node($node);
($ret, $stdout, $stderr) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT snowflake_next_id()");
like($stderr,
	qr/ERROR:  55000: snowflake epoch or layout changed since the high-water mark was written/,
	'a changed epoch is refused at start');
$node->append_conf('postgresql.conf', "snowflake.accept_layout_change = on");
my $log_offset = -s $node->logfile;
restart_node($node);
like(slurp_file($node->logfile, $log_offset),
	qr/LOG:  snowflake accepted a change of epoch or layout/,
	'accepting the changed epoch is logged at start');
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_next_id()'),
	'>', $max_before, 'under a later epoch IDs resume above the old ones');

$node->stop;
done_testing();
