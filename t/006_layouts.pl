# Copyright (c) 2026, the snowflake authors
#
# Layouts other than Twitter's, chosen at server start with
# snowflake.time_bits, datacenter_bits, worker_bits and sequence_bits:
#  - a layout that does not fit, or a node id too wide for its part, stops
#    the server at start;
#  - IDs of other layouts generate and decode (one datacenter and 700
#    workers; a 16-bit machine id; a 53-bit layout that JavaScript reads
#    exactly, checked through node's JSON.parse);
#  - a 4-bit sequence (16 IDs a millisecond) makes 4 sessions wait for the
#    next millisecond all the time, and still no ID repeats or goes back;
#  - snowflake_status works for layouts of 53 to 62 bits of time, whose
#    time runs out past the largest timestamptz from 54 bits on;
#  - a restart with another layout or epoch refuses to generate and says
#    what changed, until the change is accepted, and then every new ID is
#    greater than every old one.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# A node with the given layout lines in place of snowflake_node's node ids.
sub layout_node
{
	my ($name, $conf) = @_;
	my $node = snowflake_node($name, extra_conf => $conf);
	return $node;
}

# Start fails, and the log says why.
my $bad_nodes = 0;
sub refuses_to_start
{
	my ($conf, $log_like, $test_name) = @_;
	my $node = PostgreSQL::Test::Cluster->new('bad' . ++$bad_nodes);
	$node->init;
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'snowflake'\n$conf\n");
	ok(!$node->start(fail_ok => 1), "server refuses to start: $test_name");
	like(slurp_file($node->logfile), $log_like,
		"... and the log says why: $test_name");
	return;
}

refuses_to_start(
	"snowflake.datacenter_bits = 10\nsnowflake.worker_bits = 10",
	qr/FATAL:  invalid snowflake layout: 73 bits do not fit in a positive bigint\n.*DETAIL:  snowflake.time_bits \(41\), snowflake.datacenter_bits \(10\), snowflake.worker_bits \(10\) and snowflake.sequence_bits \(12\) must add up to at most 63\./,
	'widths that add up to more than 63');
refuses_to_start(
	'snowflake.time_bits = 31',
	qr/FATAL:  invalid value for parameter "snowflake.time_bits": "31"\n.*DETAIL:  "snowflake.time_bits" must be an integer from 32 to 63\./,
	'fewer than 32 bits of time');
refuses_to_start(
	'snowflake.sequence_bits = 0',
	qr/FATAL:  invalid value for parameter "snowflake.sequence_bits": "0"\n.*DETAIL:  "snowflake.sequence_bits" must be an integer from 1 to 31\./,
	'no sequence');
refuses_to_start(
	"snowflake.datacenter_bits = 4\nsnowflake.worker_bits = 6\nsnowflake.worker_id = 64",
	qr/FATAL:  invalid value for parameter "snowflake.worker_id": "64"\n.*DETAIL:  "snowflake.worker_id" must be an integer from 0 to 63\./,
	'a worker id that does not fit its width');
refuses_to_start(
	"snowflake.datacenter_bits = 0\nsnowflake.datacenter_id = 1",
	qr/DETAIL:  "snowflake.datacenter_id" must be an integer from 0 to 0\./,
	'a datacenter id where the layout has no datacenter');

# One datacenter, 700 workers: no datacenter part and a 10-bit worker.
my $wide = layout_node('wide', qq{
snowflake.datacenter_bits = 0
snowflake.worker_bits = 10
snowflake.datacenter_id = 0
snowflake.worker_id = 700
});
start_node($wide);
$wide->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is( $wide->safe_psql(
		'postgres', q{
WITH i AS (SELECT snowflake_next_id() AS id)
SELECT p.datacenter_id, p.worker_id, p.ts = q.ts, abs(extract(epoch FROM p.ts - now())) < 60
FROM i, snowflake_parse(i.id) p,
	snowflake_parse(i.id, '2010-11-04 01:42:54.657+00', 41, 0, 10, 12) q}),
	'0|700|t|t',
	'41/0/10/12: worker 700 is generated and decoded, with the configured layout or an explicit one'
);
is($wide->safe_psql('postgres', 'SHOW snowflake.worker_bits'),
	'10', '... and SHOW gives the layout');
$wide->stop;

# A 16-bit machine id with a 6-bit sequence.
my $machine = layout_node('machine', qq{
snowflake.datacenter_bits = 0
snowflake.worker_bits = 16
snowflake.sequence_bits = 6
snowflake.datacenter_id = 0
snowflake.worker_id = 40000
});
start_node($machine);
$machine->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is( $machine->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT id), min(p.worker_id), max(p.worker_id), max(p.sequence) <= 63
FROM (SELECT snowflake_next_id() AS id FROM generate_series(1, 5000)) g,
	snowflake_parse(g.id) p}),
	'5000|5000|40000|40000|t',
	'41/0/16/6: 5000 distinct IDs of machine 40000, sequence below 64');
$machine->stop;

# 53 bits: 41 of time, 6 of worker, 6 of sequence.
my $js = layout_node('js', qq{
snowflake.datacenter_bits = 0
snowflake.worker_bits = 6
snowflake.sequence_bits = 6
snowflake.datacenter_id = 0
snowflake.worker_id = 63
snowflake.max_lead = 1000
});
start_node($js);
$js->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids AS SELECT snowflake_next_id() AS id FROM generate_series(1, 100000);
});
is( $js->safe_psql(
		'postgres',
		'SELECT count(DISTINCT id), max(id) < 2^53 FROM ids'),
	'100000|t',
	'41/0/6/6: a burst of 100000 distinct IDs, all below 2^53');

SKIP:
{
	my ($out, $err) = run_command([ 'node', '--version' ]);
	skip 'node is not installed', 2 unless $out =~ /^v\d+/;

	# JSON numbers through JavaScript's JSON.parse and back to text.
	my $round_trip = sub {
		my ($json) = @_;
		my ($stdout, $stderr);
		IPC::Run::run(
			[
				'node', '-e',
				'let d = ""; process.stdin.on("data", c => d += c).on("end", () => '
				  . 'process.stdout.write(JSON.parse(d).map(String).join("\n")))'
			],
			'<', \$json, '>', \$stdout, '2>', \$stderr)
		  or die "node failed: $stderr";
		return $stdout;
	};
	my $json = $js->safe_psql('postgres',
		'SELECT json_agg(id ORDER BY id) FROM (SELECT id FROM ids ORDER BY id DESC LIMIT 1000) s');
	my $text = $js->safe_psql('postgres',
		"SELECT string_agg(id::text, E'\\n' ORDER BY id) FROM (SELECT id FROM ids ORDER BY id DESC LIMIT 1000) s");
	is($round_trip->($json), $text,
		'53-bit IDs read by JavaScript\'s JSON.parse come back exact');
	my $twitter = '[175928847299117063]';
	isnt($round_trip->($twitter), '175928847299117063',
		'... while a 63-bit ID does not (the check can fail)');
}
$js->stop;

# A 4-bit sequence: 16 IDs a millisecond, 4 sessions at once.
my $narrow = layout_node('narrow', "snowflake.sequence_bits = 4\n");
start_node($narrow);
$narrow->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (session int, n int, id bigint, after timestamptz);
});
my @sessions;
foreach my $s (1 .. 4)
{
	my ($out, $err) = ('', '');
	push @sessions,
	  IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1',
			'-d', $narrow->connstr('postgres'),
			'-c',
			"INSERT INTO ids SELECT $s, n, snowflake_next_id(), clock_timestamp() FROM generate_series(1, 5000) n"
		],
		'>', \$out, '2>', \$err);
}
$_->finish foreach @sessions;
is( $narrow->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT id), max((snowflake_parse(id)).sequence) FROM ids}),
	'20000|20000|15',
	'4-bit sequence: 4 sessions, 20000 IDs, no duplicate, sequence up to 15');
check_strictly_increasing($narrow, 'ids',
	'... each session\'s IDs strictly increasing',
	partition_by => 'session');
is( $narrow->safe_psql(
		'postgres', q{
SELECT count(*) FROM ids
WHERE (snowflake_parse(id)).ts > date_trunc('milliseconds', after)}),
	'0', '... and no ID ahead of the clock (max_lead is 0)');

# The status view for layouts whose time runs out past the largest
# timestamptz (294276 AD): from 54 bits of time on.  1.3 failed with 22008
# at 54 and 55 bits and showed the epoch itself at 62 (the arithmetic
# wrapped); 53 bits end in 287,626 AD, which timestamptz holds.
foreach my $case ([ 53, 0, 5, 5 ], [ 54, 2, 2, 5 ], [ 55, 0, 4, 4 ],
	[ 62, 0, 0, 1 ])
{
	my ($time_bits, $dc_bits, $worker_bits, $seq_bits) = @$case;
	my $long = snowflake_node(
		"time$time_bits",
		node_ids   => 0,
		extra_conf => qq{
snowflake.time_bits = $time_bits
snowflake.datacenter_bits = $dc_bits
snowflake.worker_bits = $worker_bits
snowflake.sequence_bits = $seq_bits
});
	start_node($long);
	my ($ret, $stdout, $stderr) = $long->psql(
		'postgres', qq{
CREATE EXTENSION snowflake;
SELECT snowflake_next_id() > 0;
-- every column as text, as SELECT * prints it
SELECT s::text <> '' FROM snowflake_status s;
SELECT isfinite(last_id_time) AND abs(extract(epoch FROM last_id_time - now())) < 60,
	isfinite(durable_mark) AND durable_mark > now(),
	CASE WHEN $time_bits <= 53
		THEN time_runs_out = epoch + (2::numeric ^ $time_bits)::bigint * interval '1 ms'
		ELSE time_runs_out = 'infinity' END
FROM snowflake_status;});
	is($ret, 0, "$time_bits bits of time: snowflake_status works") or diag $stderr;
	is($stdout, "t\nt\nt|t|t",
		"... its last ID's time and its mark are now, and time_runs_out is "
		  . ($time_bits <= 53 ? 'the end of the bits' : 'infinity'));
	$long->stop;
}

# The guard: a restart with another layout refuses to generate.
my $max_before = $narrow->safe_psql('postgres', 'SELECT max(id) FROM ids');
$narrow->stop;
$narrow->append_conf('postgresql.conf', "snowflake.sequence_bits = 6\n");
start_node($narrow);
my ($elapsed, $ret, $stdout, $stderr) =
  psql_timed($narrow, 'SELECT snowflake_next_id()');
like(
	$stderr,
	qr/ERROR:  55000: snowflake epoch or layout changed since the high-water mark was written\n.*DETAIL:  Since the high-water mark was written, snowflake.sequence_bits was 4 and is now 6\. IDs made now could equal or fall below IDs already issued\.\n.*HINT:  Restore the earlier settings, or set snowflake.accept_layout_change = on for one restart/,
	'a restart with another layout refuses to generate and says what changed');
ok( $narrow->log_contains(
		qr/LOG:  snowflake epoch or layout changed since the high-water mark was written; ID generation is disabled/
	),
	'... and logs it at start');
is($narrow->safe_psql('postgres', "SELECT (snowflake_parse($max_before, '2010-11-04 01:42:54.657+00', 41, 5, 5, 4)).sequence IS NOT NULL"),
	't', '... while decoding still works');

# Accepting the change deliberately: new IDs lie above every old one.
$narrow->stop;
$narrow->append_conf('postgresql.conf', "snowflake.accept_layout_change = on\n");
start_node($narrow);
ok( $narrow->log_contains(
		qr/LOG:  snowflake accepted a change of epoch or layout; IDs resume at \d+ ms after the epoch, above every earlier ID/
	),
	'accepting the change is logged');
my $after = $narrow->safe_psql('postgres',
	"SET snowflake.max_lead = '1h';\nSELECT snowflake_next_id()");
cmp_ok($after, '>', $max_before,
	'after an accepted change of layout, new IDs are greater than every old one');

# A change under which the old IDs would read as a time years ahead is
# refused, though accepted: no max_lead could reach it.
$narrow->stop;
$narrow->append_conf('postgresql.conf', "snowflake.sequence_bits = 5\n");
start_node($narrow);
($elapsed, $ret, $stdout, $stderr) =
  psql_timed($narrow, 'SELECT snowflake_next_id()');
like($stderr,
	qr/lies \d+ ms ahead of the clock, beyond any snowflake.max_lead/,
	'an accepted change that would resume years ahead of the clock is refused');
$narrow->stop;
$narrow->append_conf('postgresql.conf', "snowflake.sequence_bits = 6\n");
start_node($narrow);

# An earlier epoch: the same numbers now stand for earlier times, so the
# clock is already past the old IDs, read in the new epoch.  (A later epoch
# would make IDs resume years ahead of the clock.)
$narrow->stop;
$narrow->append_conf('postgresql.conf',
	"snowflake.epoch = '2010-01-01 00:00:00+00'\nsnowflake.accept_layout_change = off\n");
start_node($narrow);
($elapsed, $ret, $stdout, $stderr) =
  psql_timed($narrow, 'SELECT snowflake_next_id()');
like($stderr,
	qr/DETAIL:  Since the high-water mark was written, snowflake.epoch \(ms since 1970\) was 1288834974657 and is now 1262304000000\./,
	'a changed epoch is refused too, naming both values');
$narrow->stop;
$narrow->append_conf('postgresql.conf', "snowflake.accept_layout_change = on\n");
start_node($narrow);
my $later = $narrow->safe_psql('postgres', 'SELECT snowflake_next_id()');
cmp_ok($later, '>', $after,
	'after an accepted change of epoch, new IDs are greater than every old one');

# A change after a crash is refused even when accepted: recovery would
# replay marks of the old layout.
$narrow->stop('immediate');
$narrow->append_conf('postgresql.conf', "snowflake.sequence_bits = 8\n");
start_node($narrow);
($elapsed, $ret, $stdout, $stderr) =
  psql_timed($narrow, 'SELECT snowflake_next_id()');
like($stderr,
	qr/but the server did not shut down cleanly/,
	'a change of layout after a crash is refused, even when accepted');
$narrow->stop;

# A standby keeps the layout it was configured with.  When its primary
# changes layout, the marks it replays count in the new one: it says so,
# and refuses to generate after a promotion rather than count them in its
# own.
my $primary = snowflake_node('layout_primary', allows_streaming => 1);
start_node($primary);
$primary->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids AS SELECT snowflake_next_id() AS id FROM generate_series(1, 1000);
});
$primary->backup('layout_backup');
my $standby = snowflake_standby($primary, 'layout_backup', 'layout_standby');
start_node($standby);
$primary->wait_for_catchup($standby);
$primary->stop;
$primary->append_conf('postgresql.conf',
	"snowflake.time_bits = 40\nsnowflake.sequence_bits = 13\nsnowflake.accept_layout_change = on\n");
start_node($primary);
$primary->safe_psql('postgres',
	"SET snowflake.max_lead = '1h';\nINSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 1000)");
$primary->wait_for_catchup($standby);
ok( $standby->wait_for_log(
		qr/WAL records a mark written under snowflake.epoch \d+ ms since 1970 and a layout of 40\/5\/5\/13 bits, but this server runs with \d+ ms and 41\/5\/5\/12 bits/
	),
	'a standby replaying marks of another layout says so');
$primary->stop('immediate');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
($elapsed, $ret, $stdout, $stderr) =
  psql_timed($standby, 'SELECT snowflake_next_id()');
like($stderr,
	qr/ERROR:  55000: snowflake epoch or layout changed since the high-water mark was written/,
	'... and refuses to generate after a promotion');
$standby->stop;

done_testing();
