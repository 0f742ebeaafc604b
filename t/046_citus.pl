
# Copyright (c) 2026, the snowflake authors

# Snowflake keys on a Citus cluster: a coordinator and two workers, each with
# citus and snowflake preloaded and metadata synced, each claiming its worker
# id from a registry (a server of its own) as a login of its own.  CREATE
# EXTENSION snowflake on the coordinator reaches the workers; a table
# distributed by id, one by tenant (with its detail table colocated), a
# reference table and a table partitioned by ID range and distributed.
# Inserts run through all three nodes at once (pgbench, with INSERT ...
# RETURNING and master/detail rows keyed before insert in one transaction)
# while a shard moves between the workers; then COPY through a worker and
# INSERT ... SELECT, pushed down, repartitioned and pulled.  Every row
# arrives once, no key repeats, every key decodes to the node that made it
# (the one that received the statement; for INSERT ... SELECT, the worker of
# the source row), the time-range functions count the same rows as the
# keys' times say.  What Citus refuses (volatile functions in UPDATE and DO
# UPDATE SET, non-immutable ones in RETURNING), Citus's own bigserial
# ranges, a worker down and back, a worker added later that claims a fresh
# worker id, and that worker restored from a file copy of its data
# directory.  docs/citus.md tells what this test shows.  Skipped unless the
# PostgreSQL under test has Citus (scripts/build-citus.sh builds one).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# the pg_config of the PostgreSQL under test, as PostgreSQL::Test::Cluster
# finds it, on PATH
chomp(my $sharedir = `pg_config --sharedir`);
plan skip_all =>
  "Citus is not installed for this PostgreSQL (no $sharedir/extension/citus.control; scripts/build-citus.sh builds one)"
  unless -f "$sharedir/extension/citus.control";

# Each node: citus first in shared_preload_libraries (Citus requires it),
# logical decoding for the shard move, prepared transactions for
# transactions that write to several workers, and few shards, to keep the
# test short.
my $citus_conf = q{
shared_preload_libraries = 'citus,snowflake'
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
max_prepared_transactions = 50
max_worker_processes = 32
citus.shard_count = 4
};

my $registry = snowflake_registry('registry');

# a Citus node that claims its worker id from the registry as the login of
# its name
sub citus_node
{
	my ($name) = @_;
	my $node = snowflake_node($name,
		registry => $registry,
		extra_conf => $citus_conf);
	# the nodes listen on a Unix socket only: where Citus connects to the
	# node itself (the shard move does)
	$node->append_conf('postgresql.conf',
		"citus.local_hostname = '" . $node->host . "'");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}

my $coordinator = citus_node('coordinator');
my $worker1 = citus_node('worker1');
my $worker2 = citus_node('worker2');
my @nodes = ($coordinator, $worker1, $worker2);

$coordinator->safe_psql('postgres',
	    "SELECT citus_set_coordinator_host('"
	  . $coordinator->host . "', "
	  . $coordinator->port . ")");
$coordinator->safe_psql('postgres',
	"SELECT citus_add_node('" . $_->host . "', " . $_->port . ")")
  foreach ($worker1, $worker2);
is( $coordinator->safe_psql(
		'postgres',
		'SELECT count(*) FILTER (WHERE hasmetadata AND metadatasynced) FROM pg_dist_node WHERE groupid > 0'),
	'2',
	'two workers with metadata synced');

# CREATE EXTENSION on the coordinator only
$coordinator->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is($_->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
	'1.4', 'CREATE EXTENSION snowflake on the coordinator reaches ' . $_->name)
  foreach ($worker1, $worker2);

# the pair "datacenter|worker" each node claimed, once its claim is there
sub node_pair
{
	my ($node) = @_;
	$node->poll_query_until('postgres', 'SELECT snowflake_next_id() > 0')
	  or die $node->name . ' never claimed a worker id';
	return $node->safe_psql('postgres',
		q{SELECT datacenter_id || '|' || worker_id FROM snowflake_parse(snowflake_next_id())});
}
my @pairs = map { node_pair($_) } @nodes;
note "claimed pairs: @pairs";
is(scalar(keys %{ { map { $_ => 1 } @pairs } }),
	3, 'the three nodes claimed distinct worker ids from the registry');
my @worker_ids = map { (split /\|/)[1] } @pairs;

# SQL that is true when the key $column was made by the node numbered by
# $node_column (0 coordinator, 1 and 2 the workers, 3 the worker added
# later)
sub made_by_sql
{
	my ($column, $node_column) = @_;
	return "(snowflake_parse($column)).worker_id = (ARRAY["
	  . join(', ', @worker_ids)
	  . "])[$node_column + 1]";
}

$coordinator->safe_psql(
	'postgres', q{
CREATE TABLE events (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	node smallint NOT NULL,
	made timestamptz NOT NULL DEFAULT clock_timestamp(),
	payload text);
SELECT create_distributed_table('events', 'id');
CREATE TABLE events_archive (LIKE events INCLUDING DEFAULTS, PRIMARY KEY (id));
SELECT create_distributed_table('events_archive', 'id', colocate_with => 'events');
CREATE TABLE orders (
	tenant int NOT NULL,
	id bigint NOT NULL DEFAULT snowflake_next_id(),
	node smallint NOT NULL,
	event_id bigint,
	PRIMARY KEY (tenant, id));
SELECT create_distributed_table('orders', 'tenant');
CREATE TABLE order_lines (
	tenant int NOT NULL,
	id bigint NOT NULL DEFAULT snowflake_next_id(),
	order_id bigint NOT NULL,
	node smallint NOT NULL,
	PRIMARY KEY (tenant, id));
SELECT create_distributed_table('order_lines', 'tenant', colocate_with => 'orders');
CREATE TABLE kinds (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	name text NOT NULL);
SELECT create_reference_table('kinds');
});

# Inserts through all three nodes at once: per transaction, an event keyed
# by its default and read back with RETURNING, then an order keyed before
# its insert and two lines of it, in one transaction
my $script = PostgreSQL::Test::Utils::tempdir() . '/inserts.sql';
open(my $fh, '>', $script) or die "could not write $script: $!";
print $fh q{\set tenant random(1, 16)
INSERT INTO events (node) VALUES (:node) RETURNING id AS event_id \gset
BEGIN;
SELECT snowflake_next_id() AS order_id \gset
INSERT INTO orders (tenant, id, node, event_id) VALUES (:tenant, :order_id, :node, :event_id);
INSERT INTO order_lines (tenant, order_id, node) VALUES (:tenant, :order_id, :node), (:tenant, :order_id, :node);
COMMIT;
};
close($fh);
my @runs;
foreach my $n (0 .. 2)
{
	my %run = (stdout => '', stderr => '');
	$run{handle} = IPC::Run::start(
		[
			'pgbench', '-n', '-T', '30', '-c', '4', '-j', '2',
			'-D', "node=$n", '-f', $script,
			'-h', $nodes[$n]->host, '-p', $nodes[$n]->port, 'postgres'
		],
		'>', \$run{stdout}, '2>', \$run{stderr});
	push @runs, \%run;
}

# a shard of events on worker 1, moved to worker 2 while the inserts run
ok( $coordinator->poll_query_until(
		'postgres', 'SELECT count(DISTINCT node) = 3 FROM events'),
	'inserts arrive through all three nodes');
my $shard = $coordinator->safe_psql(
	'postgres', qq{
SELECT shardid FROM pg_dist_shard JOIN pg_dist_shard_placement USING (shardid)
WHERE logicalrelid = 'events'::regclass AND nodeport = @{[$worker1->port]}
ORDER BY shardid LIMIT 1});
my $before_move = $coordinator->safe_psql('postgres', 'SELECT count(*) FROM events');
$coordinator->safe_psql(
	'postgres', qq{
SELECT citus_move_shard_placement($shard, '@{[$worker1->host]}', @{[$worker1->port]},
	'@{[$worker2->host]}', @{[$worker2->port]}, shard_transfer_mode => 'force_logical')});
my $after_move = $coordinator->safe_psql('postgres', 'SELECT count(*) FROM events');
ok((!grep { !$_->{handle}->pumpable } @runs),
	'the inserts still run when the shard move ends');
cmp_ok($after_move, '>', $before_move, 'rows arrived during the move');
is( $coordinator->safe_psql(
		'postgres',
		"SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = $shard"),
	$worker2->port,
	'the shard is on worker 2');

my @transactions;
foreach my $n (0 .. 2)
{
	ok($runs[$n]{handle}->finish, "pgbench through node $n succeeded")
	  or diag $runs[$n]{stderr};
	my ($count) = $runs[$n]{stdout} =~ /number of transactions actually processed: (\d+)/;
	$transactions[$n] = $count // 0;
}
note "transactions through the coordinator, worker 1, worker 2: @transactions";
is( $coordinator->safe_psql(
		'postgres', q{
SELECT string_agg(format('%s %s %s %s', node, e, o, l), ' ' ORDER BY node)
FROM (SELECT node, count(*) AS e FROM events GROUP BY node) e
	JOIN (SELECT node, count(*) AS o FROM orders GROUP BY node) o USING (node)
	JOIN (SELECT node, count(*) AS l FROM order_lines GROUP BY node) l USING (node)}),
	join(' ', map { "$_ $transactions[$_] $transactions[$_] " . 2 * $transactions[$_] } 0 .. 2),
	'every transaction left one event, one order and two lines, once');
is( $coordinator->safe_psql(
		'postgres', q{
SELECT count(*) FROM orders o
WHERE (SELECT count(*) FROM order_lines l WHERE l.tenant = o.tenant AND l.order_id = o.id) <> 2}),
	'0',
	'every order has its two lines, keyed before the insert');
is( $coordinator->safe_psql(
		'postgres', q{
SELECT count(*) FROM orders o
WHERE o.event_id NOT IN (SELECT id FROM events)}),
	'0',
	"every order names the event that RETURNING gave");
foreach my $table (qw(events orders order_lines))
{
	is( $coordinator->safe_psql(
			'postgres',
			"SELECT count(*) FROM $table WHERE NOT " . made_by_sql('id', 'node')),
		'0',
		"every key of $table decodes to the node that received the insert");
}

# COPY through a worker
$worker1->safe_psql('postgres',
	    "COPY events (node, payload) FROM STDIN;\n"
	  . join('', map { "1\tcopied $_\n" } 1 .. 500)
	  . "\\.\n");
is( $coordinator->safe_psql(
		'postgres',
		"SELECT count(*) FILTER (WHERE " . made_by_sql('id', 'node') . "), count(*) "
		  . "FROM events WHERE payload LIKE 'copied %'"),
	'500|500',
	'COPY through worker 1: every key made by worker 1');

# INSERT ... SELECT pushed down: colocated tables, the keys copied as they are
my $plan = $worker2->safe_psql('postgres',
	'EXPLAIN (COSTS OFF) INSERT INTO events_archive SELECT * FROM events WHERE node = 0');
unlike($plan, qr/INSERT\/SELECT method/,
	'INSERT ... SELECT between colocated tables is pushed down to the shards');
$worker2->safe_psql('postgres',
	'INSERT INTO events_archive SELECT * FROM events WHERE node = 0');
is( $coordinator->safe_psql(
		'postgres', q{
SELECT count(*) FROM events_archive a
WHERE node = 0 AND EXISTS (SELECT FROM events e WHERE e.id = a.id)}),
	$transactions[0],
	'and keeps the keys it copies');

# INSERT ... SELECT that makes new keys, through worker 2: into the table
# distributed by them and into one distributed by tenant, Citus
# repartitions; with a LIMIT, it pulls the rows to worker 2.  Either way the
# SELECT's target list, the default with it, runs on the shards of the
# source: each key is made by the worker that holds its source row.
my @insert_selects = (
	[
		'repartition',
		q{INSERT INTO events (node, payload) SELECT 2, 'again ' || id FROM events WHERE payload LIKE 'copied %'}
	],
	[
		'repartition',
		q{INSERT INTO orders (tenant, node, event_id) SELECT 1 + id % 16, 2, id FROM events WHERE payload LIKE 'copied %'}
	],
	[
		'pull to coordinator',
		q{INSERT INTO events (node, payload) SELECT 2, 'pulled ' || id FROM events WHERE payload LIKE 'copied %' ORDER BY id LIMIT 100}
	]);
foreach my $insert_select (@insert_selects)
{
	my ($method, $sql) = @$insert_select;
	my ($table) = $sql =~ /^INSERT INTO (\w+)/;
	my $explain = $worker2->safe_psql('postgres', "EXPLAIN (COSTS OFF) $sql");
	like($explain, qr/INSERT\/SELECT method: \Q$method\E$/m,
		"INSERT ... SELECT into $table: $method"
		  . ($sql =~ /LIMIT/ ? ' (a LIMIT)' : ''));
	$worker2->safe_psql('postgres', $sql);
}
my %worker_id_at_port = map { $nodes[$_]->port => $worker_ids[$_] } 0 .. 2;
my $at_port = join(', ',
	map { "($_, $worker_id_at_port{$_})" } sort keys %worker_id_at_port);
my ($of_source, $of_worker2, $made) = split / /, $coordinator->safe_psql(
	'postgres', qq{
WITH k AS MATERIALIZED (
	SELECT split_part(payload, ' ', 2)::bigint AS source, id FROM events
	WHERE payload LIKE 'again %' OR payload LIKE 'pulled %'
	UNION ALL
	SELECT event_id, id FROM orders WHERE event_id IN (SELECT id FROM events WHERE payload LIKE 'copied %'))
SELECT count(*) FILTER (WHERE (snowflake_parse(k.id)).worker_id = w.worker_id)
	|| ' ' || count(*) FILTER (WHERE (snowflake_parse(k.id)).worker_id = $worker_ids[2])
	|| ' ' || count(*)
FROM k JOIN pg_dist_shard_placement p
		ON p.shardid = get_shard_id_for_distribution_column('events', k.source)
	JOIN (VALUES $at_port) w(port, worker_id) ON w.port = p.nodeport});
note "INSERT ... SELECT through worker 2: $made keys, $of_worker2 made by worker 2";
is("$of_source $made", '1100 1100',
	'every key of INSERT ... SELECT is made by the worker of its source row');

# A reference table: the key is made once, by the node that received the
# insert, and every node's copy has the same one
$worker1->safe_psql('postgres', q{INSERT INTO kinds (name) VALUES ('a'), ('b')});
is( $coordinator->safe_psql(
		'postgres', q{
SELECT count(DISTINCT result) || ' ' || count(*)
FROM run_command_on_placements('kinds', $$SELECT string_agg(id::text, ',' ORDER BY id) FROM %s$$)}),
	'1 3',
	'the reference table has the same keys on its three copies');
is( $coordinator->safe_psql(
		'postgres', 'SELECT count(*) FROM kinds WHERE ' . made_by_sql('id', '1')),
	'2', 'made by the node that received the insert');

# What Citus refuses: a volatile function outside an INSERT's values (in an
# UPDATE's SET, a DO UPDATE SET), and any function but an IMMUTABLE one in
# RETURNING, snowflake_parse(id) among them (snowflake_parse(id, epoch) is
# IMMUTABLE)
foreach my $refused (
	[
		q{UPDATE events SET payload = snowflake_next_id()::text WHERE id = 1},
		qr/functions used in UPDATE queries on distributed tables must not be VOLATILE/
	],
	[
		q{INSERT INTO events (node) VALUES (0) ON CONFLICT (id) DO UPDATE SET payload = snowflake_next_id()::text},
		qr/functions used in the DO UPDATE SET clause of INSERTs on distributed tables must be marked IMMUTABLE/
	],
	[
		q{INSERT INTO events (node) VALUES (0) RETURNING (snowflake_parse(id)).worker_id},
		qr/non-IMMUTABLE functions are not allowed in the RETURNING clause/
	])
{
	my ($sql, $error) = @$refused;
	my ($ret, $stdout, $stderr) = $worker1->psql('postgres', $sql);
	like($stderr, $error, "Citus refuses: $sql");
}
my $epoch = $worker1->safe_psql('postgres', 'SHOW snowflake.epoch');
is( $worker1->safe_psql(
		'postgres',
		"INSERT INTO events (node) VALUES (1) RETURNING (snowflake_parse(id, '$epoch')).worker_id"),
	$worker_ids[1],
	'RETURNING takes snowflake_parse(id, epoch)');

# Citus's own answer, bigserial: a range per node, its group id in the high
# 16 bits, so keys made by worker 1 lie above every key of the coordinator
$coordinator->safe_psql('postgres',
	q{CREATE TABLE serials (id bigserial PRIMARY KEY, node smallint);
SELECT create_distributed_table('serials', 'id');});
$_->safe_psql('postgres', 'INSERT INTO serials (node) VALUES (0)')
  foreach ($coordinator, $worker1, $coordinator);
is( $coordinator->safe_psql(
		'postgres',
		q{SELECT string_agg(format('%s:%s', node, id >> 48), ' ' ORDER BY id) FROM serials}),
	'0:0 0:0 0:1',
	'bigserial: the key made by worker 1 after lies above both of the coordinator');

# No key repeats anywhere, and every key's time is the clock of its node
is( $coordinator->safe_psql(
		'postgres', q{
SELECT count(*) - count(DISTINCT id)
FROM (SELECT id FROM events UNION ALL SELECT id FROM orders
	  UNION ALL SELECT id FROM order_lines UNION ALL SELECT id FROM kinds) k}),
	'0',
	'no key repeats across the tables');
is( $coordinator->safe_psql(
		'postgres', q{
SELECT count(*) FROM events
WHERE abs(extract(epoch FROM made - snowflake_timestamp(id))) >= 1}),
	'0',
	"every event's key carries the time it was made, on any node");

# The time-range functions on a distributed table: between two keys' times
my ($from, $to) = split /\|/, $coordinator->safe_psql(
	'postgres', q{
SELECT snowflake_timestamp(percentile_disc(0.25) WITHIN GROUP (ORDER BY id)),
	   snowflake_timestamp(percentile_disc(0.75) WITHIN GROUP (ORDER BY id))
FROM events});
is( $coordinator->safe_psql(
		'postgres', qq{
SELECT (SELECT count(*) FROM events WHERE snowflake_between(id, '$from', '$to'))
	|| ' ' || (SELECT count(*) FROM events WHERE id >= snowflake_min_id('$from') AND id <= snowflake_max_id('$to'))
	|| ' ' || (SELECT count(*) FROM events WHERE snowflake_timestamp(id) BETWEEN '$from' AND '$to')}),
	join(' ', ($coordinator->safe_psql('postgres',
				"SELECT count(*) FROM events WHERE snowflake_timestamp(id) BETWEEN '$from' AND '$to'")) x 3),
	'snowflake_between and snowflake_min_id / max_id count the rows of their times');
like(
	$coordinator->safe_psql(
		'postgres',
		"EXPLAIN (COSTS OFF) SELECT count(*) FROM events WHERE snowflake_between(id, '$from', '$to')"),
	qr/Index Cond: \(\(id >= /,
	'and each shard plans snowflake_between as a range of its primary key');

# A table partitioned by day of its keys, then distributed; a partition made
# after is made on every node
$coordinator->safe_psql(
	'postgres', q{
SET TimeZone = 'UTC';
CREATE TABLE events_by_day (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	node smallint NOT NULL)
	PARTITION BY RANGE (id);
SELECT format('CREATE TABLE %I PARTITION OF events_by_day FOR VALUES FROM (%s) TO (%s)',
			  'events_by_day_' || to_char(starts, 'YYYYMMDD'), from_id, to_id)
FROM snowflake_partition_bounds(date_trunc('day', now()) - interval '1 day',
								date_trunc('day', now()) + interval '1 day', '1 day') \gexec
SELECT create_distributed_table('events_by_day', 'id');
SELECT format('CREATE TABLE %I PARTITION OF events_by_day FOR VALUES FROM (%s) TO (%s)',
			  'events_by_day_' || to_char(starts, 'YYYYMMDD'), from_id, to_id)
FROM snowflake_partition_bounds(date_trunc('day', now()) + interval '1 day',
								date_trunc('day', now()) + interval '2 days', '1 day') \gexec
});
is( $worker2->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_inherits WHERE inhparent = 'events_by_day'::regclass"),
	'3',
	'the partitions, the one made after distribution too, are on every node');
$nodes[$_]->safe_psql('postgres',
	"INSERT INTO events_by_day (node) SELECT $_ FROM generate_series(1, 100)")
  foreach 0 .. 2;
my ($rows, $misplaced) = (0, 0);
foreach my $part (
	split /\n/,
	$coordinator->safe_psql(
		'postgres',
		"SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'events_by_day'::regclass"
	))
{
	my ($day) = $part =~ /(\d{8})$/;
	my ($n, $bad) = split /\|/, $coordinator->safe_psql(
		'postgres', qq{
SET TimeZone = 'UTC';
SELECT count(*), count(*) FILTER (WHERE NOT snowflake_between(id, '$day',
	'$day'::timestamptz + interval '1 day' - interval '1 ms'))
FROM $part});
	$rows += $n;
	$misplaced += $bad;
}
is("$rows $misplaced", '300 0',
	'every row inserted through any node is in the partition of its key\'s day');

# A worker down: the inserts whose keys or tenants land on its shards fail,
# the others go on, through any node.  Back, it takes its worker id again
# and goes on above its keys.
my $before_down = $coordinator->safe_psql('postgres',
	"SELECT max(id) FROM events WHERE node = 2");
$worker2->stop;
my %tenant_on = map { split /\|/ } split /\n/, $coordinator->safe_psql(
	'postgres', q{
SELECT t, nodeport FROM generate_series(1, 16) t
	JOIN pg_dist_shard_placement p ON p.shardid = get_shard_id_for_distribution_column('orders', t)});
my ($went, $refused) = (0, 0);
foreach my $tenant (sort keys %tenant_on)
{
	my ($ret) = $worker1->psql('postgres',
		"INSERT INTO orders (tenant, node) VALUES ($tenant, 1)");
	if ($tenant_on{$tenant} == $worker1->port)
	{
		$went++ if $ret == 0;
	}
	else
	{
		$refused++ if $ret != 0;
	}
}
note "worker 2 down: $went tenants took inserts, $refused refused them";
ok($went > 0 && $refused > 0 && $went + $refused == 16,
	'worker 2 down: an insert through worker 1 goes in where its shard is on worker 1, fails where on worker 2');
$worker2->start;
$worker2->poll_query_until('postgres', 'SELECT snowflake_next_id() > 0')
  or die 'worker 2 never claimed its worker id again';
$worker2->safe_psql('postgres', 'INSERT INTO events (node) VALUES (2)');
is( $coordinator->safe_psql(
		'postgres',
		"SELECT count(*) FROM events WHERE node = 2 AND id > $before_down AND "
		  . made_by_sql('id', 'node')),
	'1',
	'worker 2 back: its keys go on above the ones it made, with its worker id');

# A worker added later claims a fresh worker id, gets the extension from
# the coordinator, and makes keys of its own
my $worker3 = citus_node('worker3');
$coordinator->safe_psql('postgres',
	"SELECT citus_add_node('" . $worker3->host . "', " . $worker3->port . ")");
is($worker3->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
	'1.4', 'a worker added later gets the extension from the coordinator');
my $pair3 = node_pair($worker3);
note "worker 3 claimed $pair3";
ok((!grep { $_ eq $pair3 } @pairs), 'and claims a worker id no other node has');
push @worker_ids, (split /\|/, $pair3)[1];
$worker3->safe_psql('postgres',
	'INSERT INTO events (node) SELECT 3 FROM generate_series(1, 100)');
is( $coordinator->safe_psql(
		'postgres',
		'SELECT count(*) FROM events WHERE node = 3 AND ' . made_by_sql('id', 'node')),
	'100',
	'its keys decode to it');
is($coordinator->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM events'),
	'0', 'no key repeats');

# A worker restored from a file copy of its data directory: it claims its
# worker id again as its login, above every key it made after the copy
$worker3->stop;
my $copy = PostgreSQL::Test::Utils::tempdir() . '/worker3';
system_or_bail('cp', '-a', $worker3->data_dir, $copy);
$worker3->start;
$worker3->poll_query_until('postgres', 'SELECT snowflake_next_id() > 0')
  or die 'worker 3 never claimed its worker id again';
$worker3->safe_psql('postgres',
	'INSERT INTO events (node) SELECT 3 FROM generate_series(1, 100)');
my $newest3 = $coordinator->safe_psql('postgres',
	'SELECT max(id) FROM events WHERE node = 3');
$worker3->stop;
restore_data_dir($worker3, $copy);
$worker3->start;
$worker3->poll_query_until('postgres', 'SELECT snowflake_next_id() > 0')
  or die 'worker 3 never claimed its worker id after the restore';
$worker3->safe_psql('postgres',
	'INSERT INTO events (node) SELECT 3 FROM generate_series(1, 100)');
is( $coordinator->safe_psql(
		'postgres',
		"SELECT count(*) FILTER (WHERE id > $newest3) || ' ' || count(*) "
		  . "FROM events WHERE node = 3 AND " . made_by_sql('id', 'node')),
	'100 300',
	'worker 3 restored from a copy: its worker id, above every key it made before');
is($coordinator->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM events'),
	'0', 'no key repeats');

done_testing();
