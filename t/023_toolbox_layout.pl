
# Copyright (c) 2026, the snowflake authors

# The SQL toolbox on a server of another layout: 41 bits of time, no
# datacenter, 6 bits of worker and 6 of sequence, 53 bits in all.  The forms
# that use the configured epoch follow the server's layout: blocks hold what
# max_lead allows of 64 IDs a millisecond, compose checks each part against
# the layout's ranges and inverts snowflake_parse, the bounds of a
# millisecond span its 12 node and sequence bits, and serials pad each part
# to the layout's digits.  The forms with an explicit epoch keep Twitter's
# layout, as snowflake_parse(id, epoch) does, so that they stay IMMUTABLE.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = snowflake_node(
	'layout53', extra_conf => q{
snowflake.time_bits = 41
snowflake.datacenter_bits = 0
snowflake.worker_bits = 6
snowflake.sequence_bits = 6
snowflake.datacenter_id = 0
snowflake.worker_id = 11
});
start_node($node);
$node->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE TABLE ids (n bigint, id bigint)');

# blocks: one millisecond's 64 IDs at max_lead 0, and no more
is( $node->safe_psql(
		'postgres', q{
INSERT INTO ids SELECT n, id FROM snowflake_next_ids(64) WITH ORDINALITY AS b(id, n);
SELECT count(*), count(DISTINCT id), bool_and(id < 2::bigint ^ 53),
	bool_and((snowflake_parse(id)).worker_id = 11), max(id) = snowflake_last_id()
FROM ids}),
	'64|64|t|t|t',
	'a block of 64 53-bit IDs of worker 11; the last is the session\'s last ID');
my ($ret, $out, $err) =
  $node->psql('postgres', 'SELECT snowflake_next_ids(65)');
like(
	$err,
	qr/cannot issue 65 IDs within snowflake.max_lead\n.*a millisecond holds 64 IDs, so a block holds at most 64 IDs/,
	'a block larger than a millisecond of this layout is refused');

# compose: the layout's ranges, and the inverse of parse
($ret, $out, $err) =
  $node->psql('postgres', 'SELECT snowflake_compose(now(), 1, 0, 0)');
like(
	$err,
	qr/snowflake datacenter_id 1 is out of range\n.*from 0 to 0\./,
	'compose refuses a datacenter the layout has no bits for');
($ret, $out, $err) =
  $node->psql('postgres', 'SELECT snowflake_compose(now(), 0, 64, 0)');
like($err, qr/snowflake worker_id 64 is out of range\n.*from 0 to 63\./,
	'compose refuses a worker id above 6 bits');
($ret, $out, $err) =
  $node->psql('postgres', 'SELECT snowflake_compose(now(), 0, 0, 64)');
like($err, qr/snowflake sequence 64 is out of range\n.*from 0 to 63\./,
	'compose refuses a sequence above 6 bits');
is( $node->safe_psql(
		'postgres', q{
SELECT setseed(0.7);
SELECT count(*) FILTER (WHERE snowflake_compose(p.ts, p.datacenter_id,
	p.worker_id, p.sequence) = r.id)
FROM (SELECT floor(random() * 2::numeric ^ 53)::bigint AS id
	  FROM generate_series(1, 3000)
	  UNION ALL SELECT id FROM ids
	  UNION ALL VALUES (0), ((1::bigint << 53) - 1)) r,
	snowflake_parse(r.id) p}),
	"\n3066",
	'compose(parse(x)) = x for 3000 random 53-bit IDs, a block and the edges');

# the bounds of a millisecond, text and serials in this layout
is( $node->safe_psql(
		'postgres', q{
SELECT snowflake_max_id(ts) - snowflake_min_id(ts),
	snowflake_min_id(ts) = snowflake_compose(ts, 0, 0, 0)
FROM (VALUES ('2026-01-01 00:00:00+00'::timestamptz)) v(ts)}),
	'4095|t',
	'a millisecond spans 2^12 IDs');
is( $node->safe_psql(
		'postgres', q{
SELECT snowflake_format(id), snowflake_serial(id, 'S-')
FROM (SELECT snowflake_compose('2026-01-01 12:34:56.789+00', 0, 11, 7) AS id) c}),
	'2026-01-01T12:34:56.789Z dc=0 worker=11 seq=7|S-2026010112345678901107',
	'format and serial show this layout\'s parts, padded to its widths');

# the forms with an explicit epoch decode and compose Twitter's layout
is( $node->safe_psql(
		'postgres', q{
SELECT snowflake_compose('2026-01-01+00', 1, 2, 3, '2010-11-04 01:42:54.657+00')
	= (snowflake_min_id('2026-01-01+00', '2010-11-04 01:42:54.657+00')
	   | (1 << 17) | (2 << 12) | 3),
	snowflake_timestamp(4194304, '2010-11-04 01:42:54.657+00')
	= '2010-11-04 01:42:54.658+00',
	snowflake_timestamp(4096) = '2010-11-04 01:42:54.658+00'}),
	't|t|t',
	'explicit epochs keep Twitter\'s layout; the configured forms use the server\'s');

is( $node->safe_psql(
		'postgres',
		'SELECT last_id = (SELECT max(id) FROM ids), ids_issued FROM snowflake_status'),
	't|64',
	'the status view shows the last ID and the IDs issued');

done_testing();
