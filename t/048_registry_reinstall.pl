
# Copyright (c) 2026, the snowflake authors

# A registry reinstalled in its database, as docs/fleet.md's "Replacing a
# registry - In the same database" says, and then restored from a backup
# taken before the reinstall (review 15's X2; its X1 promoted an
# asynchronous standby that had missed the reinstall instead).  The drop
# notes the old registry's lease with its floor, and the new install takes
# that lease: with the default 30 s, longer than the 3 s before, server c,
# which claimed a's worker id from the new install and was then cut off from
# the restored registry (its login is not in the backup), generated up to
# its 30 s promise, while the restored registry gave a the worker id back
# above a floor only 3 s + 1 s ahead.  The review's 5 s lease made 6,218
# IDs twice so.  The IDs of a before the restore, of c, and of a after it
# must lie in disjoint ranges of time, in that order.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $registry = snowflake_registry(
	'registry',
	lease => '3 s',
	init  => { allows_streaming => 1 });
my $a = snowflake_node('a', registry => $registry);
start_node($a);
my ($pair_a) = wait_for_pair($a);
ok(defined $pair_a, "a claims a worker id ($pair_a)");

# last night's backup, with a's claim in it
$registry->backup('before');

# a, cut off from the registry (its registry worker stopped), generates up
# to its promise, and leaves its worker id to the new install's first claim
my $cut = cut_off($registry, $a);
my $stream_a = start_id_stream($a, 'a');

# the docs' reinstall: the drop, then CREATE EXTENSION and the block
# without its CREATE ROLE statements (the roles are the cluster's)
$registry->safe_psql('postgres', 'DROP EXTENSION snowflake_registry');
my $block = fleet_doc_registry_sql();
$block =~ s/^CREATE ROLE [^;]*;\n//mg;
$registry->safe_psql('postgres', $block);
like(
	$registry->safe_psql('postgres',
		"SELECT setting FROM pg_db_role_setting, unnest(setconfig) setting "
		  . "WHERE setting LIKE 'snowflake\\_registry.lease=%'"),
	qr/^snowflake_registry\.lease=3(\.0*)?$/,
	'the drop notes the lease of the registry it drops');
is($registry->safe_psql('postgres', 'SELECT lease FROM snowflake_registry.settings'),
	'00:00:03', 'the new install takes that lease, not the default 30 s');

# c, whose login the backup does not have, claims a's worker id from the
# new install, above the floor the drop noted, and generates
my $c = snowflake_node('c', registry => $registry);
start_node($c);
my ($pair_c) = wait_for_pair($c, 30);
is($pair_c, $pair_a, "c claims a's worker id from the new install");
my $stream_c = start_id_stream($c, 'c');
ok(wait_for_stream($stream_c, '(SELECT count(*) FROM ids) > 0'),
	'c generates');

# the registry is lost, and restored from the backup: c cannot log in there
# and generates up to its promise; a, back in touch, gets its worker id
# again in the restored registry's new epoch
$registry->stop('immediate');
ok(wait_for_stream($stream_a, '(SELECT count(*) FROM errors) > 0'),
	'a, cut off, stopped at its promise');
my $a_before_restore =
  $a->safe_psql('postgres', 'SELECT coalesce(max(n), 0) FROM snowflake_stream_ids');
restore_data_dir($registry, $registry->backup_dir . '/before');
$registry->start;
signal_process('CONT', $cut->{pid}, 'the registry worker of a');

ok( wait_for_stream(
		$stream_c,
		"(SELECT count(*) FROM errors WHERE message LIKE '55000: could not generate a snowflake ID: the ID would pass the time the registry recorded%') > 0"
	),
	'c stops at its promise');
my $c_last = $c->safe_psql('postgres', 'SELECT max(id) FROM snowflake_stream_ids');
ok( wait_for_stream(
		$stream_a,
		"(SELECT count(*) FROM ids WHERE n > $a_before_restore AND id > $c_last) > 100"
	),
	"a generates with its worker id again, above c's IDs");
stop_id_stream($_) foreach ($stream_a, $stream_c);

check_pair_holders(
	"a before the restore, c on the new install, a after: no ID twice, disjoint ranges of time",
	{
		a_before => [ stream_ids($stream_a, "n <= $a_before_restore") ],
		c        => [ stream_ids($stream_c) ],
		a_after  => [ stream_ids($stream_a, "n > $a_before_restore") ],
	});

$_->stop foreach ($a, $c);
done_testing();
