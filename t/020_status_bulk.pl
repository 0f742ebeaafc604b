
# Copyright (c) 2026, the snowflake authors

# The status view during a bulk run, and blocks of IDs under contention.
#
# Design claim: while the mark writer runs, generating backends do no I/O;
# the writer keeps the durable mark ahead of generation, so no backend
# reaches the mark and writes it itself.  Clients draw blocks of IDs
# (snowflake_next_ids) and single IDs at once for several seconds, long
# enough for the mark to be moved several times; snowflake_status then shows
# that the writer wrote every mark of the run and backends none.  The same
# run shows that concurrent blocks never overlap, that each block is
# increasing, and that the view counts every ID issued.  Without the
# writer, a second run shows backends writing the mark, as they then must.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = snowflake_node('bulk', extra_conf => "synchronous_commit = off\n");
start_node($node);
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (client int, block bigint, n bigint, id bigint);
});

# the status counters that the run is judged by
sub status
{
	my %s;
	@s{qw(writer backends issued running)} = split /\|/,
	  $node->safe_psql('postgres',
		'SELECT marks_by_writer, marks_by_backends, ids_issued, mark_writer_running FROM snowflake_status'
	  );
	return \%s;
}

# The first ID after initdb finds no mark and writes one itself; after it,
# the writer keeps the mark ahead.
$node->safe_psql('postgres', 'SELECT snowflake_next_id()');
my $deadline = time() + 10;
sleep 1 while status()->{writer} == 0 && time() < $deadline;
my $before = status();
is($before->{running}, 't', 'the mark writer runs');
cmp_ok($before->{writer}, '>', 0, 'the mark writer has written a mark');

# 2 clients for 4 s at a modest rate, so that the TAP files running beside
# this one keep their timing: blocks of 1000 and single IDs, each block
# numbered by the client's transaction.  The writer moves the mark with
# time, every quarter of a stride while IDs are issued, whatever the rate.
$node->pgbench(
	'--no-vacuum --client=2 --jobs=2 --time=4 --rate=50',
	0,
	[qr{processed: [1-9]\d*}],
	[qr{^$}],
	'2 clients draw blocks of IDs and single IDs for 4 s',
	{
		'020_block@3' => q{
INSERT INTO ids SELECT :client_id, txid_current(), n, id
FROM snowflake_next_ids(1000) WITH ORDINALITY AS b(id, n);
},
		'020_single@1' => q{
INSERT INTO ids SELECT :client_id, txid_current(), 1, snowflake_next_id();
}
	});
my $after = status();

cmp_ok($after->{writer} - $before->{writer},
	'>=', 4, 'the mark writer moved the mark during the run');
is($after->{backends}, $before->{backends},
	'backends wrote no mark themselves during the bulk run');

my ($rows, $distinct, $blocks) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT count(*), count(DISTINCT id), count(DISTINCT block) FROM ids');
cmp_ok($blocks, '>', 50, "the run issued $blocks blocks and single IDs");
is($distinct, $rows, "all $rows IDs are distinct");
is($after->{issued} - $before->{issued},
	$rows, 'snowflake_status counted every ID issued');
check_strictly_increasing($node, 'ids', 'each block strictly increases',
	partition_by => 'block');
# blocks are contiguous ticks: in ID order each block's IDs come together,
# with no ID of another session among them
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE block IS DISTINCT FROM prev) = count(DISTINCT block)
FROM (SELECT block, lag(block) OVER (ORDER BY id) AS prev FROM ids) s}),
	't',
	'no ID of another session falls inside a block');
is( $node->safe_psql(
		'postgres', q{
SELECT durable_mark > last_id_time AND b.id <= last_id
FROM snowflake_status, (SELECT max(id) AS id FROM ids) b}),
	't',
	'the durable mark lies above the last ID, which is the largest issued');

# The counter is not blind: without the writer (SIGTERM stops it until the
# next restart), the same kind of run has backends write the mark.
my $writer = mark_writer_pid($node, wait => 1);
signal_process('TERM', $writer, 'the mark writer');
$deadline = time() + 10;
sleep 1 while kill(0, $writer) && time() < $deadline;
is(status()->{running}, 'f', 'the mark writer stopped');
$node->pgbench(
	'--no-vacuum --client=1 --time=2 --rate=50',
	0,
	[qr{processed: [1-9]\d*}],
	[qr{^$}],
	'a client draws blocks of IDs for 2 s without the mark writer',
	{ '020_block_alone' => 'SELECT count(*) FROM snowflake_next_ids(1000);' });
cmp_ok(status()->{backends}, '>', $after->{backends},
	'without the mark writer, backends write the mark themselves');

done_testing();
