
# Copyright (c) 2026, the snowflake authors

# A registry reloaded from pg_dump into the running server, as docs/fleet.md
# says it may be ("a dump restored is a new epoch"), found by a review of
# the 1.4 registry: the reload restores every row (the dump's settings take
# the place of those CREATE EXTENSION makes), and its first call starts a
# new epoch whose floor lies above every promise the dump forgot.  Server a
# claims after the dump and is then cut off from the registry; server b,
# whose clock is 15 s behind, gets a's pair after the reload, above that
# floor, and issues none of a's IDs.
#
# Then a dump of the registry, taken while a holds its claim, loaded by the
# other routes of docs/fleet.md's "From a dump", each into a database of its
# own set up with docs/fleet.md's block first (as a review of 1.4 did:
# that registry kept its own lease and epoch, and two servers issued the
# same IDs): the dump's settings and layout go on there, or, where the
# registry cannot know them, every call is refused.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

skip_without_libfaketime();

my $registry = snowflake_registry('registry', lease => '5 s');
my $a = snowflake_node('a', registry => $registry);
my $b = snowflake_node('b', registry => $registry, offset => -15);

# the dump, taken before a claims
my $dump = $registry->basedir . '/registry.sql';
command_ok(
	[
		'pg_dump', '-h', $registry->host, '-p', $registry->port,
		'-f', $dump, 'postgres'
	],
	'the registry is dumped');

start_node($a);
my ($pair_a) = wait_for_pair($a);
ok(defined $pair_a, "a claims a pair ($pair_a)");

# the dump of the other routes, taken while a holds its claim
my $held_dump = $registry->basedir . '/held.dump';
command_ok(
	[
		'pg_dump', '-h', $registry->host, '-p', $registry->port,
		'-Fc', '-f', $held_dump, 'postgres'
	],
	'the registry is dumped while a holds its claim');
my $dumped = $registry->safe_psql('postgres',
	'SELECT registry FROM snowflake_registry.settings');

# a generates for 20 s
my $generate = q{
CREATE TABLE IF NOT EXISTS ids (id bigint);
DO $$
DECLARE
	stop timestamptz := clock_timestamp() + interval '%s s';
BEGIN
	WHILE clock_timestamp() < stop LOOP
		BEGIN
			INSERT INTO ids SELECT snowflake_next_ids(200);
		EXCEPTION WHEN object_not_in_prerequisite_state THEN
			PERFORM pg_sleep(0.05);
		END;
		PERFORM pg_sleep(0.01);
	END LOOP;
END $$;
SELECT count(*) FROM ids;};
my $count_a = $a->safe_psql('postgres', sprintf($generate, 20));
note "a issued $count_a IDs";

# a is cut off from the registry (it may go on up to its promise)
$registry->safe_psql('postgres', q{
ALTER ROLE a NOLOGIN;
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'a';});

# the dump reloaded into the running server, with psql as usual
$registry->safe_psql('postgres', 'DROP SCHEMA snowflake_registry CASCADE');
my ($rc, $out, $err) = $registry->psql('postgres', undef,
	on_error_stop => 1,
	extra_params => [ '-f', $dump ]);
is($rc, 0, 'the dump reloads without an error') or diag($err);
is( $registry->safe_psql('postgres',
		"SELECT floor >= clock_timestamp() + interval '4 s' "
		  . 'FROM snowflake_registry.epoch()'),
	't',
	'its first call starts an epoch whose floor lies the lease ahead');

start_node($b);
my ($pair_b) = wait_for_pair($b);
note "b claims $pair_b";
my $count_b = $b->safe_psql('postgres', sprintf($generate, 15));
note "b issued $count_b IDs";

my $ids_a = $a->safe_psql('postgres', 'SELECT id FROM ids');
$b->safe_psql('postgres', "CREATE TABLE ids_a (id bigint)");
$b->safe_psql('postgres',
	"INSERT INTO ids_a SELECT unnest('{" . join(',', split /\n/, $ids_a) . "}'::bigint[])");
my $identical = $b->safe_psql('postgres',
	'SELECT count(*) FROM ids JOIN ids_a USING (id)');
is($identical, '0', 'a and b issue no identical IDs');

# A database of the registry's server set up with docs/fleet.md's block
# (the roles are the server's, made already), then loaded by pg_restore with
# the options given, or by psql from pg_dump with those given; the exit code.
my $block = fleet_doc_registry_sql();
$block =~ s/^CREATE ROLE [^;]*;\n//mg;
sub load_into
{
	my ($db, %params) = @_;
	$registry->safe_psql('postgres', "CREATE DATABASE $db");
	$registry->safe_psql($db, $block);
	$registry->safe_psql($db, $params{before}) if defined $params{before};
	my @connect = ('-h', $registry->host, '-p', $registry->port);
	my ($stdout, $stderr);
	my $ok =
	  defined $params{dump}
	  ? IPC::Run::run(
		[ 'pg_dump', @connect, @{ $params{dump} }, 'postgres' ], '|',
		[ 'psql', @connect, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $db ],
		'>', \$stdout, '2>', \$stderr)
	  : IPC::Run::run(
		[ 'pg_restore', @connect, @{ $params{restore} }, '-d', $db, $held_dump ],
		'>', \$stdout, '2>', \$stderr);
	note "loading $db: $stderr" if $stderr ne '';
	return $ok;
}
my $settings =
  q{SELECT s.registry = '%s', s.lease, f.layout, s.epoch_key IS DISTINCT FROM snowflake_registry.epoch_key()
	FROM snowflake_registry.settings s, snowflake_registry.fleet f};
my $layout = '1288834974657/41/5/5/12';

ok(load_into('block_data', restore => [ '--data-only', '--single-transaction' ]),
	'a data-only restore into a registry set up by the block loads without an error');
is($registry->safe_psql('block_data', sprintf($settings, $dumped)),
	"t|00:00:05|$layout|t",
	'... the dump\'s settings take the place of the block\'s: its identity, its lease, and its epoch key, which starts an epoch');
is( $registry->safe_psql('block_data',
		"SELECT floor >= clock_timestamp() + interval '4 s' "
		  . 'FROM snowflake_registry.epoch()'),
	't',
	'... whose floor lies the dump\'s lease ahead');

load_into('block_whole', restore => []);
is($registry->safe_psql('block_whole', sprintf($settings, $dumped)),
	"t|00:00:05|$layout|t",
	'a whole restore into a registry set up by the block: the dump\'s settings take the place of the block\'s');

ok( load_into(
		'block_inserts',
		dump => [ '--data-only', '--inserts', '--on-conflict-do-nothing' ]),
	'a data-only dump as inserts that skip conflicts loads into a registry set up by the block');
is($registry->safe_psql('block_inserts', sprintf($settings, $dumped)),
	"t|00:00:05|$layout|t",
	'... and its settings take the place of the block\'s');

# claims that the registry cannot put under their own settings
my $refused =
  qr/ERROR:  the snowflake registry holds claims of another registry/;
load_into('triggers_off', restore => [ '--data-only', '--disable-triggers' ]);
my ($rc, $stdout, $stderr) =
  $registry->psql('triggers_off', 'SELECT snowflake_registry.configure()');
like($stderr, $refused,
	'claims loaded with triggers off, without their settings: every call refused');
load_into(
	'used',
	before => q{INSERT INTO snowflake_registry.claims (datacenter_id, worker_id,
	state, version, epoch, claimed_at, extended_at)
VALUES (9, 0, 'idle', 1, 1, clock_timestamp(), clock_timestamp())},
	restore => ['--data-only']);
($rc, $stdout, $stderr) =
  $registry->psql('used', 'SELECT snowflake_registry.configure()');
like($stderr, $refused,
	'a dump loaded into a registry that made a claim: every call refused');

# the older dump of this very registry loaded into it, after its lease grew:
# its claims conflict, its settings of another time keep the larger lease
$registry->safe_psql('postgres',
	"SELECT snowflake_registry.configure(lease => '8 s')");
my $epoch_id = $registry->safe_psql('postgres',
	'SELECT epoch_id FROM snowflake_registry.settings');
IPC::Run::run(
	[
		'pg_restore', '-h', $registry->host, '-p', $registry->port,
		'--verbose', '--data-only', '-d', 'postgres', $held_dump
	],
	'>', \$stdout, '2>', \$stderr);
like(
	$stderr,
	qr/WARNING:  the snowflake registry's settings were replaced by its settings of another time/,
	'an older dump of the registry loaded into it warns');
is( $registry->safe_psql('postgres',
		"SELECT lease, epoch_id <> '$epoch_id' FROM snowflake_registry.settings"),
	'00:00:08|t',
	'... keeps the larger lease, and starts a new epoch (b\'s next extension may have started it already)');

done_testing();
