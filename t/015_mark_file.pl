
# Copyright (c) 2026, the snowflake authors

# A damaged or foreign high-water mark file.
#
# The mark file ($PGDATA/snowflake.mark) is what keeps IDs from repeating
# across restarts, so a file the server cannot trust must neither be
# believed nor silently ignored: the server starts, logs that the file is
# invalid and that generation is disabled, and every snowflake_next_id()
# fails with SQLSTATE XX001 and a hint on how to recover.  The server also
# leaves the file alone at shutdown.  The operator's way out, removing the
# file and restarting, makes generation work again.
#
# A valid mark crafted by this test is accepted (and honoured), which shows
# that the damaged files below differ from a good one only in the damage.
# No clock needs to move here, so the server runs on the real clock.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time);

my $node = snowflake_node('main');
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint NOT NULL);
INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 1000);
});
my $old_max = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
$node->stop;

my $mark_path = $node->data_dir . '/snowflake.mark';
my $good      = slurp_file($mark_path);
my $good_mark = read_mark_file($mark_path);
ok($good_mark->{crc_ok} && $good_mark->{mark_ms} == id_ms($old_max) + 1,
	'a clean shutdown left a valid mark file');
is( $good,
	mark_file_bytes(
		mark_ms       => $good_mark->{mark_ms},
		written_at_ms => $good_mark->{written_at_ms}),
	'the test builds mark files byte for byte as the server does');

my @cases = (
	{   name   => 'truncated',
		bytes  => substr($good, 0, 16),
		reason => 'It does not have the size of a mark file.' },
	{   name   => 'empty',
		bytes  => '',
		reason => 'It does not have the size of a mark file.' },
	{   name   => 'too long',
		bytes  => $good . "\0",
		reason => 'It does not have the size of a mark file.' },
	{   name  => 'foreign (wrong magic)',
		bytes => mark_file_bytes(
			magic   => 0x474E4950,
			mark_ms => $good_mark->{mark_ms}),
		reason => 'It does not begin with the mark file\'s magic number.' },
	{   name  => 'from a newer version',
		bytes => mark_file_bytes(
			version => MARK_VERSION + 1,
			mark_ms => $good_mark->{mark_ms}),
		reason => 'It was written by a newer version of snowflake.' },
	{   name  => 'naming a layout that is not valid',
		bytes => mark_file_bytes(
			mark_ms => $good_mark->{mark_ms},
			layout  => [ 41, 10, 10, 12 ]),
		reason => 'It names a layout that is not valid.' },
	{   name  => 'with a bad checksum',
		bytes => mark_file_bytes(
			mark_ms => $good_mark->{mark_ms},
			crc     => crc32c('not the contents')),
		reason => 'Its checksum does not match its contents.' },
	{   name   => 'unreadable',
		bytes  => $good,
		mode   => 0000,
		reason => 'It could not be opened: Permission denied.' });

foreach my $case (@cases)
{
	my $name = $case->{name};

	write_mark_file($mark_path, $case->{bytes});
	chmod($case->{mode}, $mark_path) if defined $case->{mode};
	my $log_offset = -s $node->logfile;
	$node->start;

	ok( $node->log_contains(
			qr/LOG:  snowflake high-water mark file "snowflake\.mark" is invalid; ID generation is disabled\n.*DETAIL:  \Q$case->{reason}\E/,
			$log_offset),
		"$name: the server logs that the mark file is invalid, and why");

	my ($elapsed, $ret, $stdout, $stderr) =
	  psql_timed($node, 'SELECT snowflake_next_id()');
	like(
		$stderr,
		qr/ERROR:  XX001: snowflake high-water mark file "snowflake\.mark" is invalid/,
		"$name: generating fails with SQLSTATE XX001");
	like(
		$stderr,
		qr/DETAIL:  \Q$case->{reason}\E/,
		"$name: ... saying what is wrong with the file");
	like(
		$stderr,
		qr/HINT:  .*remove the file and restart the server/,
		"$name: ... and how to recover");
	is( $node->safe_psql(
			'postgres', "SELECT (snowflake_parse($old_max)).worker_id"),
		'11',
		"$name: decoding IDs still works");

	$node->stop;
	chmod(0600, $mark_path) if defined $case->{mode};
	is(slurp_file($mark_path), $case->{bytes},
		"$name: the server left the file as it was");
}

# The operator's recovery: remove the file and restart.
unlink $mark_path or die "could not remove $mark_path: $!";
$node->start;
my ($elapsed, $ret, $stdout, $stderr) = psql_timed($node,
	'INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 1000) RETURNING id'
);
is($ret, 0, 'after removing the file and restarting, generation works')
  or diag $stderr;
is( $node->safe_psql(
		'postgres',
		"SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id > $old_max) FROM ids"
	),
	'2000|2000|1000',
	'... with IDs above the earlier ones (the clock has passed them)');
$node->stop;
ok(read_mark_file($mark_path)->{crc_ok},
	'... and the server keeps a new valid mark file');

# A valid mark crafted by the test, one minute ahead of the clock, is
# trusted: generation resumes above it (given the lead to get there).
my $ahead_ms = int(time() * 1000) - SNOWFLAKE_EPOCH_UNIX_MS + 60_000;
write_mark_file($mark_path, mark_file_bytes(mark_ms => $ahead_ms));
$node->start;
my $id = $node->safe_psql(
	'postgres', q{
SET snowflake.max_lead = 120000;
SELECT snowflake_next_id();
});
cmp_ok(id_ms($id), '>=', $ahead_ms,
	'a valid crafted mark is honoured: the next ID lies at or above it');

done_testing();
