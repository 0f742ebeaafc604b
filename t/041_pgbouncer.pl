
# Copyright (c) 2026, the snowflake authors

# Behind PgBouncer (Debian's pgbouncer) in transaction pooling mode, with
# its default server_reset_query, which that mode does not run between
# clients: one pool of one server connection, two clients, on Unix sockets.
# INSERT ... DEFAULT snowflake_next_id() RETURNING id and
# snowflake_next_ids(n) work as they do on a direct connection, and
# snowflake_last_id(), called in the transaction of its snowflake_next_id(),
# gives that call's ID.  In a later transaction it promises nothing: the
# server session it runs on is the pool's, so it gives the ID another client
# drew last, or, on a new server connection, the error "not yet defined in
# this session".  docs/operations.md ("Does it work behind PgBouncer?")
# says so.  Skipped where pgbouncer is not installed.

use strict;
use warnings;

use File::Spec;
use FindBin;
use Time::HiRes qw(usleep);
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# Debian installs pgbouncer in /usr/sbin, which a user's PATH may lack
my ($pgbouncer) =
  grep { -x $_ }
  map { File::Spec->catfile($_, 'pgbouncer') }
  (File::Spec->path, '/usr/sbin', '/usr/local/sbin');
plan skip_all => 'pgbouncer is not installed (Debian package pgbouncer)'
  unless defined $pgbouncer;

my $node = snowflake_node('pooled');
start_node($node);
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE orders (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	customer text NOT NULL
);});
my $user = $node->safe_psql('postgres', 'SELECT current_user');

# PgBouncer listens on a Unix socket of its own, in the host directory and
# on the port that a node object reserves for it: through that object,
# psql and background_psql connect to PgBouncer as to a server.
my $bouncer = PostgreSQL::Test::Cluster->new('bouncer', own_host => 1);
my $dir = $bouncer->basedir;
append_to_file("$dir/userlist.txt", qq{"$user" ""\n});
my $node_host = $node->host;
my $node_port = $node->port;
my $bouncer_host = $bouncer->host;
my $bouncer_port = $bouncer->port;
my $bouncer_log = $bouncer->logfile;
append_to_file(
	"$dir/pgbouncer.ini", qq{
[databases]
snowflake = host=$node_host port=$node_port dbname=postgres

[pgbouncer]
listen_addr =
listen_port = $bouncer_port
unix_socket_dir = $bouncer_host
auth_type = trust
auth_file = $dir/userlist.txt
admin_users = $user
pool_mode = transaction
default_pool_size = 1
max_client_conn = 10
logfile = $bouncer_log
pidfile = $dir/pgbouncer.pid
});
# During PostgreSQL 19's betas its libpq asks for protocol version 3.9999
# ("grease"), to find servers and proxies that cannot negotiate a version;
# Debian 12's PgBouncer 1.18 cannot, and closes the connection ("bad packet
# header").  The test's clients ask for 3.0, as that libpq's documentation
# advises (max_protocol_version); libpq before 18 ignores the variable.
$ENV{PGMAXPROTOCOLVERSION} = '3.0';
my ($bouncer_out, $bouncer_err) = ('', '');
my $bouncer_run = IPC::Run::start([ $pgbouncer, "$dir/pgbouncer.ini" ],
	'>', \$bouncer_out, '2>', \$bouncer_err);
END { $bouncer_run->kill_kill if $bouncer_run; }
# Its socket first: a psql that finds no server exits before reading the
# query that poll_query_until writes to it, which then dies of a broken pipe
# (a run on 17 did) rather than trying again.
my $socket = "$bouncer_host/.s.PGSQL.$bouncer_port";
foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	last if -S $socket;
	usleep(100_000);
}
$bouncer->poll_query_until('snowflake', 'SELECT true')
  or die "pgbouncer did not start: $bouncer_err";

# PgBouncer's own settings, from its console: transaction pooling, and
# server_reset_query at its default, DISCARD ALL, which it runs between
# clients only in session pooling mode
my %config = map { my @f = split /\|/; ($f[0] => $f[1] // '') }
  split /\n/, $bouncer->safe_psql('pgbouncer', 'SHOW CONFIG');
is($config{pool_mode}, 'transaction', 'PgBouncer pools transactions');
is($config{server_reset_query}, 'DISCARD ALL',
	'server_reset_query is its default, DISCARD ALL');
is($config{server_reset_query_always}, '0',
	'... which transaction pooling does not run between clients');

my $alice = $bouncer->background_psql('snowflake', on_error_stop => 0);
my $bob = $bouncer->background_psql('snowflake', on_error_stop => 0);

# the output of a query, which must succeed, through a client
sub through
{
	my ($client, $sql) = @_;
	my ($out, $failed) = $client->query($sql);
	die "query failed through PgBouncer: $sql\n$client->{stderr}" if $failed;
	return $out;
}

# the server session a client's next transaction runs on
sub backend
{
	my ($client) = @_;
	return through($client, 'SELECT pg_backend_pid()');
}
is(backend($alice), backend($bob),
	'both clients run on the one server connection of the pool');

# INSERT ... RETURNING with the default, from both clients in turn: each
# statement is a transaction of its own, and each gets the ID of its row
my @returned;
foreach my $i (1 .. 20)
{
	my $client = $i % 2 ? $alice : $bob;
	push @returned,
	  through($client,
		"INSERT INTO orders (customer) VALUES ('customer $i') RETURNING id");
}
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT id),
	bool_and((snowflake_parse(id)).datacenter_id = 5 AND (snowflake_parse(id)).worker_id = 11)
FROM orders}),
	'20|20|t',
	'20 INSERT ... DEFAULT snowflake_next_id() RETURNING id through PgBouncer: 20 new IDs of this server'
);
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(id::text, E'\n' ORDER BY n), count(*) FILTER (WHERE id <= previous)
FROM (SELECT id, n, lag(id) OVER (ORDER BY n) AS previous
	  FROM (SELECT id, substring(customer from '\d+')::int AS n FROM orders) o) s}),
	join("\n", @returned) . '|0',
	'RETURNING gave each client the ID of its row, and each later insert a larger one'
);

# snowflake_next_ids(n): a block, and rows keyed by a block in one
# statement
is( through(
		$alice,
		'SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id <= previous) '
		  . 'FROM (SELECT id, lag(id) OVER (ORDER BY n) AS previous '
		  . 'FROM snowflake_next_ids(1000) WITH ORDINALITY AS b(id, n)) s'),
	'1000|1000|0',
	'snowflake_next_ids(1000) through PgBouncer gives 1000 increasing IDs');
my @block = split /\n/,
  through($bob,
	"INSERT INTO orders (id, customer) SELECT id, 'block' FROM snowflake_next_ids(3) id RETURNING id"
  );
ok(@block == 3 && $block[0] < $block[1] && $block[1] < $block[2],
	'INSERT ... SELECT FROM snowflake_next_ids(3) RETURNING id: three rows, three increasing IDs'
);

# snowflake_last_id() in the transaction of its snowflake_next_id(): that
# call's ID, whatever the other client drew before
through($bob, 'SELECT snowflake_next_id()');
my ($inserted, $last) = split /\n/, through(
	$alice, q{
BEGIN;
INSERT INTO orders (customer) VALUES ('same transaction') RETURNING id;
SELECT snowflake_last_id();
COMMIT;});
is($last, $inserted,
	'in the transaction of the insert, snowflake_last_id() is the ID of its row');
through($bob, 'SELECT snowflake_next_id()');
is( through(
		$alice, q{
BEGIN;
SELECT snowflake_next_id() = snowflake_last_id();
SELECT count(*) = 2 FROM snowflake_next_ids(2) id WHERE id <= snowflake_last_id();
COMMIT;}),
	"t\nt",
	'... and after a single ID or a block, in one transaction');

# In a later transaction, the pool's server session answers: with the ID
# that another client drew last
my $mine = through($alice, 'SELECT snowflake_next_id()');
my $theirs = through($bob, 'SELECT snowflake_next_id()');
my $answer = through($alice, 'SELECT snowflake_last_id()');
isnt($answer, $mine,
	'in a later transaction, snowflake_last_id() is not the ID of the client\'s own call'
);
is($answer, $theirs, '... but the one the other client drew last');

# or, on a new server connection, with an error, though the client drew an
# ID
through($alice, 'SELECT snowflake_next_id()');
my $before = backend($alice);
$bouncer->safe_psql('pgbouncer', 'RECONNECT snowflake');
my $after = backend($alice);
isnt($after, $before, 'after RECONNECT the pool has a new server connection');
my (undef, $failed) = $alice->query('SELECT snowflake_last_id()');
ok($failed,
	'on it snowflake_last_id() fails, though the client drew an ID before');
like(
	$alice->{stderr},
	qr/ERROR:  snowflake_last_id is not yet defined in this session/,
	'... with the error of a session that has drawn none');

$alice->quit;
$bob->quit;
$bouncer_run->signal('TERM');
$bouncer_run->finish;
undef $bouncer_run;

done_testing();
