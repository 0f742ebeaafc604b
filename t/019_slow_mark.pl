# Copyright (c) 2026, the snowflake authors
#
# A slow or stuck disk under the mark, and what a crash after a slow write
# costs.
#
# A backend that reaches the mark while the mark writer is still writing it
# waits for the writer, and pg_stat_activity shows that wait as
# SnowflakeMark (from PostgreSQL 17 on; as Extension before).  That wait
# must end on a cancel or on statement_timeout, or a stuck disk would hang
# every generating backend.  strace delays the writer's rename() by a few
# seconds to emulate the disk.
#
# A slow write makes the next mark lie further ahead (twice the write
# time), so after a crash IDs resume further ahead of the clock.  The first
# calls wait for the clock up to snowflake.max_clock_wait and then fail, but
# with an error that says what really happens (resuming above the mark),
# not that the clock is behind.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time usleep);

my $node = snowflake_node('main');
start_node($node);
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY);
INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 1000);
});

SKIP:
{
	my ($out, $err) = run_command([ 'strace', '-V' ]);
	skip 'strace is not installed', 6 unless $out =~ /strace/;

	my $writer = mark_writer_pid($node, wait => 1);
	my $trace  = $node->basedir . '/strace.out';
	my $strace = IPC::Run::start(
		[
			'strace', '-p', $writer, '-o', $trace,
			'-e', 'trace=rename',
			'-e', 'inject=rename:delay_enter=6000000'
		],
		'>', \my $strace_out, '2>', \my $strace_err);

	# Keep IDs flowing until the writer sits in a delayed rename().
	my $deadline = time() + 30;
	until ((-s $trace // 0) > 0 || time() > $deadline)
	{
		$node->safe_psql('postgres',
			'INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 100)'
		);
		usleep(100_000);
	}
	skip "strace could not attach to the mark writer: $strace_err", 6
	  unless (-s $trace // 0) > 0;
	ok(1, 'the mark writer is stuck in rename() for 6 s');

	# Wait out the old mark: the next ID needs the one being written.
	usleep(1_200_000);
	my ($elapsed, $ret, $stdout, $stderr) = psql_timed($node,
		"SET statement_timeout = '300ms';\nSELECT snowflake_next_id();");
	like(
		$stderr,
		qr/ERROR:  57014: canceling statement due to statement timeout/,
		'a backend waiting for the stuck mark writer obeys statement_timeout');
	cmp_ok($elapsed, '<', 2, '... promptly, not when the write ends');

	my $waiter = start_waiter($node, 'waiter', \my $bg_out, \my $bg_err,
		'SELECT snowflake_next_id()');
	ok( wait_for_wait_event(
			$node, "application_name = 'waiter'",
			'SnowflakeMark'),
		'... and pg_stat_activity shows it waiting for the mark ('
		  . wait_event_of($node, 'SnowflakeMark') . ')');
	cancel_waiter($node, 'waiter');
	$waiter->finish;
	like(
		$bg_err,
		qr/ERROR:  57014: canceling statement due to user request/,
		'... and pg_cancel_backend()');

	$strace->signal('TERM');
	$strace->finish;
	my $id = $node->safe_psql('postgres',
		'INSERT INTO ids SELECT snowflake_next_id() RETURNING id');
	ok($id, 'once the disk is back, IDs go on');
}

# After a crash the server resumes at its mark.  A mark 6 s ahead of the
# clock, as a slow write leaves it, written at the real time.
$node->stop;
my $now_ms  = int(time() * 1000) - SNOWFLAKE_EPOCH_UNIX_MS;
my $mark_ms = $now_ms + 6000;
write_mark_file(
	$node->data_dir . '/snowflake.mark',
	mark_file_bytes(mark_ms => $mark_ms, written_at_ms => $now_ms));
start_node($node);
my ($elapsed, $ret, $stdout, $stderr) = psql_timed($node,
	"SET snowflake.max_clock_wait = 500;\nSELECT snowflake_next_id();");
like(
	$stderr,
	qr/ERROR:  55000: could not generate a snowflake ID: resuming above the high-water mark\n.*DETAIL:  After a restart, IDs resume at the durable high-water mark, which lies (\d+) ms ahead of the clock/,
	'resuming above a mark still ahead of a clock that did not go back is not blamed on the clock'
);
my ($ahead) = $stderr =~ /which lies (\d+) ms ahead/;
ok(defined $ahead && $ahead > 3000 && $ahead <= 6000,
	'... and the detail says how far ahead the mark lies')
  or diag "detail says " . ($ahead // 'nothing');
like($stderr,
	qr/HINT:  Wait \d+ ms, or raise snowflake\.max_lead to at least \d+ ms to issue IDs ahead of the clock at once\./,
	'... and the hint says when IDs come back and how not to wait');
my $id = $node->safe_psql('postgres',
	"SET snowflake.max_lead = 10000;\nSELECT snowflake_next_id();");
cmp_ok(id_ms($id), '>=', $mark_ms, 'with that lead, IDs resume at the mark at once');

# A clock that went back below where the mark was written is still the
# clock's fault.
$node->stop;
$now_ms = int(time() * 1000) - SNOWFLAKE_EPOCH_UNIX_MS;
write_mark_file(
	$node->data_dir . '/snowflake.mark',
	mark_file_bytes(mark_ms => $now_ms + 6000, written_at_ms => $now_ms + 5000));
start_node($node);
($elapsed, $ret, $stdout, $stderr) = psql_timed($node,
	"SET snowflake.max_clock_wait = 0;\nSELECT snowflake_next_id();");
like($stderr,
	qr/ERROR:  58000: could not generate a snowflake ID: the clock is behind/,
	'a mark written at a later clock reading than now blames the clock');

# A version 1 mark file, as snowflake 1.0 wrote it, is still honoured.
$node->stop;
$now_ms = int(time() * 1000) - SNOWFLAKE_EPOCH_UNIX_MS;
write_mark_file($node->data_dir . '/snowflake.mark',
	mark_file_bytes(version => 1, mark_ms => $now_ms + 60_000));
start_node($node);
$id = $node->safe_psql('postgres',
	"SET snowflake.max_lead = 120000;\nSELECT snowflake_next_id();");
cmp_ok(id_ms($id), '>=', $now_ms + 60_000,
	'a mark file from snowflake 1.0 is read, and IDs resume above it');
is(read_mark_file($node->data_dir . '/snowflake.mark')->{version},
	2, '... and the next mark is written in the new format');

$node->stop;
done_testing();
