# A streaming standby refuses to generate: it carries its primary's
# datacenter and worker ids, so its IDs could collide with the primary's.
# It still decodes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $primary = snowflake_node('primary', allows_streaming => 1);
start_node($primary);
$primary->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next_id());
INSERT INTO t SELECT FROM generate_series(1, 100);
});
$primary->backup('backup');

my $standby = snowflake_standby($primary, 'backup', 'standby');
start_node($standby);
$primary->safe_psql('postgres', 'INSERT INTO t SELECT FROM generate_series(1, 100)');
$primary->wait_for_catchup($standby);

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'the standby is in recovery');
my ($ret, $stdout, $stderr) = $standby->psql('postgres',
	'\set VERBOSITY verbose' . "\n" . 'SELECT snowflake_next_id()');
isnt($ret, 0, 'generating on the standby fails');
like(
	$stderr,
	qr/ERROR:  25006: cannot generate snowflake IDs during recovery\n.*DETAIL:  A standby carries its primary's datacenter and worker ids.*\n.*HINT:  Generate IDs on the primary\./s,
	'the error says why and where to generate');
is( $standby->safe_psql(
		'postgres', 'SELECT count(*), count(DISTINCT (snowflake_parse(id)).ts) > 0 FROM t'),
	'200|t',
	'the standby sees the primary\'s rows and decodes them');

# The primary goes on generating meanwhile.
is( $primary->safe_psql(
		'postgres', 'SELECT snowflake_next_id() > (SELECT max(id) FROM t)'),
	't',
	'the primary still generates');

$standby->stop;
$primary->stop;
done_testing();
