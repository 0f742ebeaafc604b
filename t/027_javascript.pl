
# Copyright (c) 2026, the snowflake authors
#
# IDs reach JavaScript as the README says: through node-postgres (npm "pg",
# installed into t/js by scripts/setup.sh --test), in the quick start's
# tables, a bigint column arrives as an exact string; the README's two
# queries for JavaScript (JSON with id::text, and snowflake_json(id)) give
# every ID exactly, and snowflake_json's time reads with new Date(); while
# JSON of the table itself (row_to_json, json_agg) sends IDs as numbers,
# which JSON.parse rounds: IDs arrive wrong, and different IDs as the same
# number, which shows that the check can fail.  Skipped where node or node-postgres is missing.
use strict;
use warnings;

use FindBin;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $top = "$FindBin::RealBin/..";
my $js = "$FindBin::RealBin/js";

my ($node_version) = eval { run_command([ 'node', '--version' ]) };
plan skip_all => 'node is not installed'
  unless ($node_version // '') =~ /^v\d+/;
plan skip_all =>
  'node-postgres is not installed in t/js (scripts/setup.sh --test, or npm ci there)'
  unless -f "$js/node_modules/pg/package.json";

# the README's queries for JavaScript: the sql block after "Hand IDs to
# JavaScript as text"
my ($readme_block) = slurp_file("$top/README.md") =~
  /^Hand IDs to JavaScript as text.*?^```sql\n(.*?)^```$/ms;
my ($json_query, $snowflake_json_query) =
  map { s/;\s*$//r } grep { /^SELECT/ } split /\n/, $readme_block // '';
like($json_query // '', qr/id::text/, 'the README builds JSON with id::text');
like($snowflake_json_query // '', qr/snowflake_json\(id\)/,
	'the README reads snowflake_json(id)');

# the quick start's server settings and its demo's tables, with 50 orders
my @settings = slurp_file("$top/scripts/quickstart.sh") =~
  /^((?:shared_preload_libraries|snowflake\.\w+) = .*)$/mg;
my $node = PostgreSQL::Test::Cluster->new('javascript');
$node->init;
$node->append_conf('postgresql.conf', join("\n", @settings) . "\n");
$node->start;
my ($stdout, $stderr);
IPC::Run::run(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $node->host,
		'-p', $node->port, '-d', 'postgres', '-f', "$top/scripts/quickstart.sql"
	],
	'<', \undef, '>', \$stdout, '2>', \$stderr);
is($?, 0, 'scripts/quickstart.sql ran') or diag($stderr);
$node->safe_psql('postgres',
	q{INSERT INTO orders (customer) SELECT 'customer ' || n FROM generate_series(1, 49) n});

my @ids = split /\n/,
  $node->safe_psql('postgres', 'SELECT id::text FROM orders ORDER BY id');
my @ms = split /\n/, $node->safe_psql('postgres',
	q{SELECT (extract(epoch FROM snowflake_timestamp(id)) * 1000)::bigint FROM orders ORDER BY id});
is(scalar @ids, 50, '50 orders');

# what node-postgres reads
my ($out, $err);
{
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGDATABASE} = 'postgres';
	IPC::Run::run([ 'node', "$js/ids.js", $json_query, $snowflake_json_query ],
		'<', \undef, '>', \$out, '2>', \$err);
}
is($?, 0, 'node read the orders') or diag($err);
my $read = eval { decode_json($out) } // {};

is_deeply($read->{column}, \@ids,
	'a bigint column arrives as exact strings');
is_deeply([ sort @{ $read->{json_text} // [] } ], [ sort @ids ],
	'JSON with id::text: every ID exact');
is_deeply($read->{snowflake_json}, \@ids, 'snowflake_json(id): every ID exact');
is_deeply($read->{snowflake_json_ms}, \@ms,
	'snowflake_json(id): its ts is the ID\'s millisecond in new Date()');
is_deeply($read->{bigint_sorted}, \@ids,
	'the strings sort as the IDs do, through BigInt');
# Near 2^61 a double holds multiples of 256 only: an ID whose sequence is
# not one arrives rounded, and the IDs of one millisecond collapse into a
# few numbers.
my @wrong = grep { ($read->{json_numbers}[$_] // '') ne $ids[$_] } 0 .. $#ids;
my %distinct = map { $_ => 1 } @{ $read->{json_numbers} // [] };
cmp_ok(scalar @wrong, '>', 0,
	'JSON of the table, IDs as numbers: IDs arrive rounded')
  or diag("read: @{$read->{json_numbers}}");
cmp_ok(scalar keys %distinct, '<', scalar @ids,
	'... and different IDs arrive as the same number');
note "e.g. $ids[$wrong[0]] arrived as $read->{json_numbers}[$wrong[0]]"
  if @wrong;

$node->stop;
done_testing();
