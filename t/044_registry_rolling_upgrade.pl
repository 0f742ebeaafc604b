
# Copyright (c) 2026, the snowflake authors

# A rolling upgrade of a fleet from 1.3 to 1.4 under load, as
# docs/operations.md's "Upgrading a registry from 1.3" tells operators to do
# it, with the registry stopped partway through.
#
# The registry and three servers start on 1.3, built from git (the last 1.3
# commit) into a copy of the PostgreSQL the tests run under, the registry
# set up as 1.3's docs/fleet.md said.  Then the registry gets 1.4's files:
# ALTER EXTENSION snowflake UPDATE refuses (in another database) while
# snowflake_registry is missing; CREATE EXTENSION snowflake_registry takes
# the 1.3 claims in.  Servers move to 1.4 one by one (a clean stop, then the
# same data directory on 1.4's files), a new 1.4 server joins, a 1.3 server
# is killed before its upgrade, the registry goes down for some seconds
# while 1.3 and 1.4 servers generate, an operator moves a live 1.3 claim to
# a 1.4 server, a 1.3 server restarts during the mixed period, and a new
# 1.3 server and a new 1.4 server claim at the same moment (two operator
# locks hold both claims in the middle); once all run 1.4 the registry's
# snowflake is updated.  Every server inserts IDs all along (pgbench), each
# row with its server and its start.
#
# A claim last touched by a 1.3 server passes on only as 1.3 let it: its
# holder's clean shutdown (to that server's own next start), a release the
# holder confirmed, or its reclaim lease; triggers on the registry's two
# tables log every such pass with the 1.3 row as it was at that moment, and
# every write of the 1.3 table that gives a pair to a 1.4 holder (the
# mirror), and no 1.3 server may take a pair the mirror holds, nor keep one
# the mirror took from it without learning so (1.3's status view and its
# servers' reading of an answer about a mirrored pair are checked).  At the
# end no ID repeats, for each pair the holders' IDs (one holder: one start
# of a server) come in the order the registry handed the pair on, without
# interleaving, and each server's starts issued increasing IDs.
#
# Needs git and the repository's history (SNOWFLAKE_GIT_DIR, default: the
# tree the test runs from), make and a C compiler; skipped, saying which,
# without them.  Takes about three minutes: the killed server's claim waits
# out its reclaim lease, 1 min, 1.3's shortest.

use strict;
use warnings;

use File::Basename qw(basename dirname);
use File::Copy     qw(copy);
use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time usleep);

# the last commit of 1.3
my $commit_13 = 'abe53ad';
my $tmp       = $PostgreSQL::Test::Utils::tmp_check;

# git as the test's user, on a checkout another user may own
sub git
{
	my ($dir, @args) = @_;
	return ('git', '-c', 'safe.directory=*', '-C', $dir, @args);
}

my $git_dir =
  ($ENV{SNOWFLAKE_GIT_DIR} // '') ne ''
  ? $ENV{SNOWFLAKE_GIT_DIR}
  : "$FindBin::RealBin/..";
# 1.3 was written for PostgreSQL 15 to 18: on 19 its build crashes at the
# first snowflake_parse (the header 19 no longer pulls in, see compat.h)
my ($server_major) = `pg_config --version` =~ /PostgreSQL (\d+)/;
plan skip_all => "snowflake 1.3 supports PostgreSQL 15 to 18, not $server_major"
  if defined $server_major && $server_major > 18;
plan skip_all => 'git is not installed: this test builds snowflake 1.3 '
  . "from the repository's history"
  unless eval { run_log([ 'git', '--version' ]) };
plan skip_all => "$git_dir is not a git checkout with commit $commit_13, "
  . 'the last of 1.3 (a copy of the tree without .git, as scripts/test.sh '
  . 'makes, needs SNOWFLAKE_GIT_DIR set to a clone): this test builds '
  . 'snowflake 1.3 from it'
  unless eval {
	run_log([ git($git_dir, 'rev-parse', '--verify', '-q', "$commit_13^{commit}") ]);
  };

# The PostgreSQL the tests run under, as pg_config in PATH describes it: the
# directory above its bindir (a node's install_path), and the directories
# pg_config names relative to it.
my %pg = map {
	my $v = `pg_config --$_`;
	chomp $v;
	($_ => $v)
} qw(bindir sharedir pkglibdir includedir includedir-server);
my $pg_root = dirname($pg{bindir});

# the longest directory that holds every one of them
my @parts = split m{/}, $pg_root;
foreach my $path (@pg{qw(sharedir includedir includedir-server)})
{
	my @p = split m{/}, $path;
	my $n = 0;
	$n++ while $n < @parts && $n < @p && $parts[$n] eq $p[$n];
	splice(@parts, $n);
}
my $pg_top = join('/', @parts);

# path's place in a copy of the installation made in root
sub in_copy
{
	my ($root, $path) = @_;
	return $root . substr($path, length($pg_top));
}

# A copy of the installation in root, laid out as the original (pg_config
# and the server find their directories relative to their own), without any
# file of snowflake's; the server headers are linked.  Copies of the copy
# (other nodes') share its files through hard links.
sub copy_installation
{
	my ($root, $from) = @_;
	if (defined $from)
	{
		system('cp', '-al', $from, $root) == 0
		  or die "could not copy $from to $root";
		return;
	}
	foreach my $dir ($pg_root, $pg{sharedir})
	{
		next if $dir ne $pg_root && index($dir, "$pg_root/") == 0;
		my $to = in_copy($root, $dir);
		system('mkdir', '-p', dirname($to)) == 0
		  && system('cp', '-a', $dir, $to) == 0
		  or die "could not copy $dir to $to";
	}
	my $linked;
	foreach my $dir (@pg{qw(includedir includedir-server)})
	{
		next if index("$dir/", "$pg_root/") == 0
		  || (defined $linked && index("$dir/", "$linked/") == 0);
		my $to = in_copy($root, $dir);
		system('mkdir', '-p', dirname($to)) == 0 && symlink($dir, $to)
		  or die "could not link $to";
		$linked = $dir;
	}
	system('rm', '-rf',
		glob(in_copy($root, $pg{pkglibdir}) . '/snowflake*'),
		glob(in_copy($root, $pg{pkglibdir}) . '/bitcode/snowflake*'),
		glob(in_copy($root, $pg{sharedir}) . '/extension/snowflake*')) == 0
	  or die "could not remove snowflake's files from $root";
	return;
}

# snowflake 1.3, built from git into a copy of the installation, once
my $base13  = "$tmp/pg-snowflake-1.3";
my $src13   = "$tmp/snowflake-1.3";
my $build13 = "$tmp/snowflake-1.3-build.log";
copy_installation($base13);
mkdir $src13 or die "could not create $src13: $!";
my $built = eval {
	IPC::Run::run([ git($git_dir, 'archive', $commit_13) ],
		'|', [ 'tar', '-x', '-C', $src13 ], '2>', $build13)
	  && IPC::Run::run(
		[
			'make', '-C', $src13, '-s', 'with_llvm=no',
			'PG_CONFIG=' . in_copy($base13, "$pg{bindir}/pg_config"),
			'all', 'install'
		],
		'>', $build13, '2>&1');
};
if (!$built)
{
	my @log = split /\n/, slurp_file($build13);
	splice(@log, 0, @log - 20) if @log > 20;
	diag "the build of snowflake 1.3 failed; the end of $build13:\n"
	  . join("\n", @log);
	plan skip_all => "snowflake 1.3 (commit $commit_13) could not be built "
	  . 'into a copy of this PostgreSQL (make and a C compiler are needed; '
	  . 'see the diagnostics)';
}

# A node's own copy of the 1.3 installation (its install_path), and the
# move of that copy to 1.4: the snowflake files of the installation the
# tests run under replace 1.3's.
my %copy_root;

sub installation_13
{
	my ($name) = @_;
	$copy_root{$name} = "$tmp/pg-$name";
	copy_installation($copy_root{$name}, $base13);
	return in_copy($copy_root{$name}, $pg_root);
}

sub install_14
{
	my ($node) = @_;
	my $lib = in_copy($copy_root{ $node->name }, $pg{pkglibdir});
	my $ext = in_copy($copy_root{ $node->name }, $pg{sharedir}) . '/extension';
	unlink glob("$lib/snowflake*"), glob("$ext/snowflake*");
	foreach my $file (glob("$pg{pkglibdir}/snowflake*.so"),
		glob("$pg{sharedir}/extension/snowflake*"))
	{
		my $to = ($file =~ /\.so$/ ? $lib : $ext) . '/' . basename($file);
		copy($file, $to) or die "could not copy $file to $to: $!";
	}
	note 'node ' . $node->name . ' now has the files of 1.4';
	return;
}

# The registry, on 1.3, set up as 1.3's docs/fleet.md said
my $reg = PostgreSQL::Test::Cluster->new('registry',
	install_path => installation_13('registry'));
$reg->init;
$reg->start;
my $doc13 = '';
IPC::Run::run([ git($git_dir, 'show', "$commit_13:docs/fleet.md") ],
	'>', \$doc13)
  or die "could not read docs/fleet.md of $commit_13";
my ($setup13) = $doc13 =~
  /^```sql\n(CREATE EXTENSION snowflake;\n-- the role the servers connect as.*?)^```$/ms
  or die "docs/fleet.md of $commit_13 has no registry setup";
$setup13 =~ s/ PASSWORD '\.\.\.'// or die "1.3's registry setup has no password";
$reg->safe_psql('postgres', $setup13);
is($reg->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
	'1.3', 'the registry runs snowflake 1.3, set up as its docs said');

# a second 1.3 registry database on the same server, with a claim, which
# nobody takes through to 1.4
$reg->safe_psql('postgres', 'CREATE DATABASE other');
$reg->safe_psql('other', q{
CREATE EXTENSION snowflake;
SELECT snowflake_registry_claim(7, 1, 1, gen_random_uuid(), 'elsewhere',
	5432, '/data', interval '10 s', interval '1 day', 31);
});

sub reg
{
	my ($sql) = @_;
	return $reg->safe_psql('postgres', $sql);
}

# The servers.  A 1.3 server claims as 1.3's docs said, through the login
# snowflake_worker, with 1.3's shortest reclaim lease, and with
# registry_require_check_in on, as docs/operations.md tells operators to set
# it for the upgrade; a 1.4 server through
# a login of its own, named as the server.  The settings of registry mode
# are in registry.conf, which an upgrade rewrites.
my $registry_conf = 'registry.conf';
my (%node, %sysid, %server_of, %loads);

sub write_registry_conf
{
	my ($node, $release) = @_;
	my $conninfo =
	    'host='
	  . $reg->host
	  . ' port='
	  . $reg->port
	  . ' dbname=postgres connect_timeout=2 user='
	  . ($release eq '1.3' ? 'snowflake_worker' : $node->name);
	my $conf = qq{snowflake.registry = '$conninfo'
snowflake.registry_check_in_interval = 200
};
	$conf .= qq{snowflake.registry_takeover_delay = '2s'
snowflake.registry_reclaim_lease = '1min'
snowflake.registry_require_check_in = on
} if $release eq '1.3';
	open my $fh, '>', $node->data_dir . "/$registry_conf"
	  or die "could not write $registry_conf: $!";
	print $fh $conf;
	close $fh;
	return;
}

sub new_server
{
	my ($name, $release) = @_;
	my $node = snowflake_node(
		$name,
		node_ids => 0,
		$release eq '1.3' ? (install_path => installation_13($name)) : (),
		extra_conf => "snowflake.datacenter_id = 5\n"
		  . "include_if_exists = '$registry_conf'\n");
	write_registry_conf($node, $release);
	$node{$name} = $node;
	return $node;
}

# The load: every server inserts batches of 20 IDs into its table ids, each
# with the server's name and the start of its postmaster, through pgbench
# in a loop that starts it again after every failure (a stop, a claim not
# granted) until the test ends.
my $load_sql = "$tmp/insert_ids.sql";
open my $lfh, '>', $load_sql or die "could not write $load_sql: $!";
print $lfh "INSERT INTO ids SELECT FROM generate_series(1, 20);\n";
close $lfh;
my $stop_file = "$tmp/stop_load";

sub stop_loads
{
	open my $fh, '>', $stop_file or die "could not write $stop_file: $!";
	close $fh;
	$_->finish foreach values %loads;
	return;
}

END
{
	# a test that died leaves no load running
	if (defined $stop_file && open my $fh, '>', $stop_file)
	{
		close $fh;
	}
}

# A server's first start: its system identifier, its table and its load
sub first_start
{
	my ($node) = @_;
	my $name = $node->name;
	$node->start;
	$sysid{$name} = $node->safe_psql('postgres',
		'SELECT system_identifier FROM pg_control_system()');
	$server_of{ $sysid{$name} } = $name;
	$node->safe_psql('postgres', qq{
CREATE EXTENSION snowflake;
CREATE TABLE ids (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	server text NOT NULL DEFAULT '$name',
	life timestamptz NOT NULL DEFAULT pg_postmaster_start_time(),
	at timestamptz NOT NULL DEFAULT clock_timestamp());
});
	my $log = "$tmp/load_$name.log";
	$loads{$name} = IPC::Run::start(
		[
			'sh', '-c',
			"while [ ! -e '$stop_file' ] && kill -0 $$ 2>/dev/null; do "
			  . "pgbench -n -c 2 -j 2 -T 2 -R 40 -f '$load_sql' -h '"
			  . $node->host
			  . "' -p "
			  . $node->port
			  . " postgres >>'$log' 2>&1; sleep 0.2; done"
		]);
	return;
}

# An ID inserted into ids: "datacenter|worker", or undef and psql's stderr
sub insert_pair
{
	my ($node) = @_;
	my ($stdout, $stderr) = ('', '');
	$node->psql(
		'postgres', q{
\set VERBOSITY verbose
INSERT INTO ids DEFAULT VALUES
RETURNING (SELECT datacenter_id || '|' || worker_id FROM snowflake_parse(id));},
		stdout => \$stdout,
		stderr => \$stderr);
	return ($stdout =~ /^(\d+\|\d+)$/m ? $1 : undef, $stderr);
}

# insert_pair retried until it succeeds or timeout seconds have passed
# (default: the TAP timeout): the pair, the seconds it took and the last
# error before it
sub wait_for_insert
{
	my ($node, $timeout) = @_;
	$timeout //= $PostgreSQL::Test::Utils::timeout_default;
	my $start    = time();
	my $last_err = '';
	while (1)
	{
		my ($pair, $err) = insert_pair($node);
		return ($pair, time() - $start, $last_err) if defined $pair;
		$last_err = $err;
		return (undef, time() - $start, $last_err)
		  if time() - $start > $timeout;
		usleep(100_000);
	}
}

# insert_pair retried while it succeeds: the error of the first that fails
sub wait_for_failed_insert
{
	my ($node) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $deadline)
	{
		my ($pair, $err) = insert_pair($node);
		return $err if !defined $pair;
		usleep(50_000);
	}
	return undef;
}

# One holder is one start of a server, labelled by the server's name and
# its postmaster's start (microseconds since 1970).  The holders of each
# pair, in the order the registry handed it on, as the test saw them.
my (%holders, %holder_label, %starts);

# The pair the running start of node, on release, generates with, once it
# does (within timeout seconds): it is the pair's next holder.  Also the
# seconds it took and the last error before.
sub holder_start
{
	my ($node, $release, $timeout) = @_;
	my ($pair, $took, $err) = wait_for_insert($node, $timeout);
	my $label = $node->name . '#'
	  . $node->safe_psql('postgres',
		'SELECT (extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint');
	$holder_label{$label} = sprintf('%s (start %d, %s)',
		$node->name, ++$starts{ $node->name }, $release);
	push @{ $holders{$pair} }, $label if defined $pair;
	note sprintf('%s generates with %s after %.1f s',
		$holder_label{$label}, $pair // 'nothing', $took);
	return ($pair, $took, $err);
}

# The 1.3 table's row of worker w of datacenter 5: its holder (by name),
# idle, released, and whether it is the mirror of a 1.4 claim
sub row13
{
	my ($w) = @_;
	my ($sys, @rest) = split /\|/, reg(qq{
SELECT system_identifier, idle, released, public.held_for_good(checked_in_at)
FROM snowflake_claims WHERE datacenter_id = 5 AND worker_id = $w});
	return join('|', $server_of{ $sys // '' } // 'none', @rest);
}

# The 1.4 registry's status of worker w of datacenter 5: its owner, state
# and holder (by name)
sub status14
{
	my ($w) = @_;
	my ($owner, $state, $sys) = split /\|/, reg(qq{
SELECT coalesce(owner, '-'), state, system_identifier
FROM snowflake_registry.status WHERE datacenter_id = 5 AND worker_id = $w});
	return join('|', $owner // 'none', $state // 'none',
		$server_of{ $sys // '' } // 'none');
}

sub extversion
{
	my ($node, $db) = @_;
	return $node->safe_psql($db // 'postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'");
}

# 1. Every server on 1.3
my ($s1, $s2, $s3) = map { new_server($_, '1.3') } qw(s1 s2 s3);
my %pair;
foreach my $node ($s1, $s2, $s3)
{
	first_start($node);
	($pair{ $node->name }) = holder_start($node, '1.3');
}
is("$pair{s1} $pair{s2} $pair{s3}", '5|0 5|1 5|2',
	'three 1.3 servers claim worker ids 0, 1 and 2 of datacenter 5');
is(extversion($s1), '1.3', 'and run snowflake 1.3');
sleep 3;

# 2. The registry gets 1.4's files.  ALTER EXTENSION snowflake UPDATE
# refuses while snowflake_registry is missing: in the other 1.3 registry
# database, and (in a transaction, rolled back) in the live one.
install_14($reg);
my ($ret, $stdout, $stderr) =
  $reg->psql('other', "\\set VERBOSITY verbose\nALTER EXTENSION snowflake UPDATE");
like(
	$stderr,
	qr/ERROR:  55000: this database is a snowflake registry with claims/,
	'ALTER EXTENSION snowflake UPDATE refuses in another 1.3 registry database with claims, without snowflake_registry'
);
like($stderr, qr/HINT:  Run CREATE EXTENSION snowflake_registry first/,
	'and says to create snowflake_registry first');
is( $reg->safe_psql('other', 'SELECT count(*) FROM snowflake_claims')
	  . ' ' . extversion($reg, 'other'),
	'1 1.3', 'that database keeps its 1.3 registry and its claim');
($ret, $stdout, $stderr) = $reg->psql('postgres',
	"\\set VERBOSITY verbose\nBEGIN;\nALTER EXTENSION snowflake UPDATE;\nROLLBACK;");
like(
	$stderr,
	qr/ERROR:  55000: this database is a snowflake registry with claims/,
	'so does the live registry database');

# docs/operations.md: CREATE EXTENSION snowflake_registry takes the 1.3
# claims in; then the roles of 1.4, by docs/fleet.md's setup.  The 1.3
# servers still log in as snowflake_worker, which 1.3 made a login and 1.4
# makes the group of the servers' logins: that role, and snowflake_operator,
# stay and get 1.4's rights.
reg('CREATE EXTENSION snowflake_registry');
is( join(' ', map { status14($_) } 0 .. 2),
	'-|legacy held|s1 -|legacy held|s2 -|legacy held|s3',
	'CREATE EXTENSION snowflake_registry takes in the three 1.3 claims');
foreach my $statement (split /;\n/, fleet_doc_registry_sql())
{
	$statement =~ s/^(?:--[^\n]*\n)+//;
	next if $statement !~ /\S/ || $statement =~ /^CREATE EXTENSION/;
	if ($statement =~ /^CREATE ROLE (\w+)/
		&& reg("SELECT count(*) FROM pg_roles WHERE rolname = '$1'") eq '1')
	{
		note "role $1 is there from 1.3: \"$statement\" skipped";
		next;
	}
	reg($statement);
}
# and, as docs/operations.md says, the lease and the layout of the 1.3 fleet,
# which 1.3 did not record, before the first 1.4 server claims
reg("SELECT snowflake_registry.configure(lease => '5 s', "
	  . "layout => '1288834974657/41/5/5/12')");
# Each 1.4 server's login gets 1.4's three functions itself, not through
# snowflake_worker, which keeps 1.3's rights until the end: with them a
# login could fill a datacenter through 1.3's functions.
foreach my $login (qw(s1 s2 s3 n4 n5 b6 n7))
{
	reg(qq{CREATE ROLE "$login" LOGIN;
GRANT USAGE ON SCHEMA snowflake_registry TO "$login";
GRANT EXECUTE ON FUNCTION snowflake_registry.claim, snowflake_registry.extend,
	snowflake_registry.idle TO "$login"});
	registry_conninfo($reg, $login);
}
my ($rc, $out, $err) = $reg->psql('postgres',
	"SET ROLE n4;\nSELECT snowflake_registry_claim(5, 1, 1, "
	  . "gen_random_uuid(), 'elsewhere', 5432, '/data', interval '10 s', "
	  . "interval '1 day', 31)");
like($err, qr/permission denied for function snowflake_registry_claim/,
	"a 1.4 server's login cannot call 1.3's registry functions");

# The registry's log, written as things happen: every 1.3 claim that passes
# to a 1.4 holder, with the 1.3 row as it is at that moment; every write of
# the 1.3 table that gives a pair to a 1.4 holder (the mirror), and any that
# takes a pair from the mirror.
reg(q{
CREATE TABLE pass_log (
	kind text NOT NULL,
	worker_id integer NOT NULL,
	xid bigint NOT NULL DEFAULT pg_catalog.txid_current(),
	at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	old_system bigint,
	new_system bigint,
	new_owner name,
	lease interval,
	idle_13 boolean,
	released_13 boolean,
	checked_in_13 timestamptz);
CREATE FUNCTION log_pass() RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
	INSERT INTO public.pass_log (kind, worker_id, old_system, new_system,
		new_owner, lease, idle_13, released_13, checked_in_13)
	SELECT '1.3 claim passed', NEW.worker_id, OLD.system_identifier,
		NEW.system_identifier, NEW.owner, OLD.legacy_reclaim_lease, o.idle,
		o.released, o.checked_in_at
	FROM public.snowflake_claims o
	WHERE o.datacenter_id = NEW.datacenter_id AND o.worker_id = NEW.worker_id;
	RETURN NULL;
END $$;
CREATE TRIGGER log_pass AFTER UPDATE ON snowflake_registry.claims
FOR EACH ROW WHEN (OLD.legacy AND NOT NEW.legacy) EXECUTE FUNCTION log_pass();
CREATE FUNCTION held_for_good(checked_in_at timestamptz) RETURNS boolean
LANGUAGE sql AS $$SELECT $1 > pg_catalog.clock_timestamp() + interval '1000 years'$$;
CREATE FUNCTION log_mirror() RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
	IF TG_OP = 'INSERT' AND held_for_good(NEW.checked_in_at) THEN
		INSERT INTO public.pass_log (kind, worker_id, new_system)
		VALUES ('mirror of a new pair', NEW.worker_id, NEW.system_identifier);
	ELSIF TG_OP = 'UPDATE' AND held_for_good(NEW.checked_in_at) AND
		  NOT held_for_good(OLD.checked_in_at) THEN
		INSERT INTO public.pass_log (kind, worker_id, old_system, new_system,
			idle_13, released_13, checked_in_13)
		VALUES ('mirror over a 1.3 claim', NEW.worker_id,
				OLD.system_identifier, NEW.system_identifier, OLD.idle,
				OLD.released, OLD.checked_in_at);
	ELSIF TG_OP = 'UPDATE' AND held_for_good(OLD.checked_in_at) AND
		  NOT held_for_good(NEW.checked_in_at) THEN
		INSERT INTO public.pass_log (kind, worker_id, old_system, new_system)
		VALUES ('1.3 server took a pair of the mirror', NEW.worker_id,
				OLD.system_identifier, NEW.system_identifier);
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER log_mirror AFTER INSERT OR UPDATE ON snowflake_claims
FOR EACH ROW WHEN (NEW.datacenter_id = 5) EXECUTE FUNCTION log_mirror();
});

# 3. s1 moves to 1.4: a clean stop marks its 1.3 claim idle, which its 1.4
# start takes at once.  1.3's lease settings must go first: 1.4 does not
# start with them.
$s1->stop;
is(row13(0), 's1|t|f|f', 'a clean stop of 1.3 server s1 marks its 1.3 claim idle');
install_14($s1);
my $log_pos = -s $s1->logfile;
ok(!$s1->start(fail_ok => 1),
	'1.4 does not start with a lease setting of 1.3 in its configuration');
like(
	slurp_file($s1->logfile, $log_pos),
	qr/unrecognized configuration parameter "snowflake\.registry_\w+".*(?:\n.*){0,3}HINT:  Remove it: since 1\.4/,
	'and its log says to remove it');
write_registry_conf($s1, '1.4');
$s1->start;
my ($pair, $took) = holder_start($s1, '1.4');
is($pair, '5|0', '1.4 server s1 takes its worker id back');
# The first claims of a new registry start above its first epoch's floor,
# its lease (30 s) plus 1 s ahead; 1.3's reclaim lease would be a minute.
cmp_ok($took, '<', 50, 'without waiting for the reclaim lease of 1.3');
$s1->safe_psql('postgres', 'ALTER EXTENSION snowflake UPDATE');
is(status14(0), 's1|held|s1', 'the registry holds it for login s1, as a 1.4 claim');
is(row13(0), 's1|f|f|t', 'and the 1.3 table for good (the mirror)');

# The 1.3 servers and operators still read the 1.3 registry: its status
# view, and the answers of its functions about a pair the mirror holds, as
# a 1.3 server's worker reads them (its query, from 1.3's source)
($ret, $stdout, $stderr) = $reg->psql('postgres',
	"SET ROLE snowflake_operator;\nSELECT count(*) FROM snowflake_registry_status");
is($stdout, '3', "1.3's snowflake_registry_status works while the mirror holds a pair")
  or diag $stderr;
my $libpq13 = '';
IPC::Run::run([ git($git_dir, 'show', "$commit_13:src/registry_libpq.c") ],
	'>', \$libpq13)
  or die "could not read src/registry_libpq.c of $commit_13";
my ($answer_columns) =
  $libpq13 =~ /^#define REGISTRY_ANSWER_COLUMNS \\\n(.*?)\n\n/ms
  or die "1.3's registry_libpq.c has no REGISTRY_ANSWER_COLUMNS";
$answer_columns = join '', $answer_columns =~ /"((?:[^"\\]|\\.)*)"/g;
$answer_columns =~ s/\\"/"/g;
$answer_columns =~ s/%%/%/g;
($ret, $stdout, $stderr) = $reg->psql('postgres',
	"SET ROLE snowflake_worker;\nSELECT $answer_columns "
	  . 'FROM public.snowflake_registry_check_in(5, 0, gen_random_uuid()) a');
like($stdout, qr/^moved\|0\|/,
	'a 1.3 server that checks in on a pair the mirror holds reads the answer: its claim moved'
) or diag $stderr;

# A new 1.4 server joins: a worker id that no 1.3 server holds
my $n4 = new_server('n4', '1.4');
first_start($n4);
($pair) = holder_start($n4, '1.4');
is($pair, '5|3', 'a new 1.4 server gets a worker id that no 1.3 server holds');
is(row13(3), 'n4|f|f|t', 'which the 1.3 table holds for it for good');

# s2 is killed before its upgrade: its 1.3 claim stays held
crash_node($s2);
my $s2_checked_in = reg(q{
SELECT checked_in_at FROM snowflake_claims WHERE datacenter_id = 5 AND worker_id = 1});
sleep 1;

# 4. The registry is down for 8 s while 1.3 server s3 and 1.4 servers s1
# and n4 generate (these up to their promise, at most the lease of 5 s past
# their last extension)
my $down_from = reg('SELECT clock_timestamp()');
$reg->stop('fast');
my $stopped_at = time();
sleep 8;
$reg->start;
my $down_until = reg('SELECT pg_postmaster_start_time()');
note sprintf('the registry was down for %.1f s', time() - $stopped_at);
foreach my $node ($s3, $s1, $n4)
{
	cmp_ok(
		$node->safe_psql(
			'postgres', qq{
SELECT count(*) FROM ids WHERE at > '$down_from' AND at < '$down_until'}),
		'>', 0,
		$node->name . ' generated while the registry was down');
}

# 5. s2 starts on 1.4 (its upgrade, after the crash): its 1.3 claim passes
# to it only once the reclaim lease has passed since its last check-in
install_14($s2);
write_registry_conf($s2, '1.4');
$s2->start;
my ($first, $first_err) = insert_pair($s2);
ok(!defined $first,
	'1.4 server s2, started after a crash on 1.3, does not generate at once')
  or diag "it generated with $first";
like($first_err,
	qr/55000: could not generate a snowflake ID: the registry refused this server's claim/,
	'the registry refuses it its claim');

# 6. An operator moves live 1.3 server s3's worker id to a new 1.4 server,
# n5, with 1.4's reassign.  It reaches s3 through the 1.3 table: s3 stops at
# its next check-in and confirms, as at a release of 1.3; the claim passes
# to n5 only then.
my $n5 = new_server('n5', '1.4');
my ($reassigned, $reassign_notice);
$reg->psql(
	'postgres',
	"SELECT snowflake_registry.reassign(5, 2, 'n5')",
	stdout => \$reassigned,
	stderr => \$reassign_notice,
	on_error_die => 1);
like(
	$reassign_notice,
	qr/DETAIL:  Until then the holder, a 1\.3 server, may still be generating IDs with it; and after that too, without snowflake\.registry_require_check_in, for as long as it cannot reach the registry\./,
	"1.4's reassign() of a 1.3 claim says how long its holder may still generate"
);
like(
	wait_for_failed_insert($s3),
	qr/this server's claim on worker id 2 of datacenter 5 was released on the registry/,
	"1.3 server s3 learns of 1.4's reassignment through the 1.3 table, and stops generating");
first_start($n5);
($pair) = holder_start($n5, '1.4');
is($pair, '5|2', 'once s3 confirmed, n5 takes the worker id');
is(row13(2), 'n5|f|f|t', 'and the 1.3 table holds it for n5 for good');

# 7. s3 restarts, still on 1.3: no pair a 1.4 server holds, its cached
# worker id (n5's now) least of all
$s3->stop;
$s3->start;
($pair) = holder_start($s3, '1.3');
is($pair, '5|4', '1.3 server s3, restarted, gets a worker id that no 1.4 server holds');
is( join(' ', map { row13($_) } 0, 2, 3),
	's1|f|f|t n5|f|f|t n4|f|f|t',
	'the 1.3 table holds those of the 1.4 servers for them');

# then moves to 1.4: its worker id at once
$s3->stop;
is(row13(4), 's3|t|f|f', 'a clean stop marks its new 1.3 claim idle');
install_14($s3);
write_registry_conf($s3, '1.4');
$s3->start;
($pair, $took) = holder_start($s3, '1.4');
is($pair, '5|4', '1.4 server s3 takes its worker id back');
cmp_ok($took, '<', 30, 'at once, without a lease to wait for');
$s3->safe_psql('postgres', 'ALTER EXTENSION snowflake UPDATE');

# 8. A 1.3 server and a 1.4 server claim at the same moment.  The 1.4 claim
# reads the 1.3 table; the 1.3 claim makes its claim; the 1.4 claim picks
# its worker id.  Two operator locks hold the claims there, which only
# widens the window: X, the advisory lock that 1.3 takes for the claims of
# a datacenter, and Y, on snowflake_registry.logins, which the 1.4 claim
# reads after the 1.3 table.  Each server tries a claim for 5 s at a time.
my $b6 = new_server('b6', '1.3');
my $n7 = new_server('n7', '1.4');
foreach my $node ($b6, $n7)
{
	open my $fh, '>>', $node->data_dir . "/$registry_conf" or die $!;
	print $fh "snowflake.registry_check_in_interval = 5000\n";
	close $fh;
}
my ($x_out, $x_err, $y_out, $y_err);
my $lock_x = start_waiter($reg, 'lock_x', \$x_out, \$x_err,
	'SELECT pg_advisory_lock(1397641047, 5)', 'SELECT pg_sleep(120)');
my $lock_y = start_waiter($reg, 'lock_y', \$y_out, \$y_err, 'BEGIN',
	'LOCK TABLE snowflake_registry.logins IN ACCESS EXCLUSIVE MODE',
	'SELECT pg_sleep(120)');
$reg->poll_query_until('postgres', q{
SELECT count(*) = 2 FROM pg_stat_activity
WHERE application_name IN ('lock_x', 'lock_y') AND wait_event = 'PgSleep'})
  or die 'the operator locks were not taken';
first_start($b6);
first_start($n7);
ok( $reg->poll_query_until(
		'postgres', q{
SELECT count(DISTINCT usename) = 2 FROM pg_stat_activity
WHERE usename IN ('snowflake_worker', 'n7') AND wait_event_type = 'Lock'
  AND clock_timestamp() - query_start < interval '2 s'}),
	'the claims of 1.3 server b6 and 1.4 server n7 wait at once');
reg(q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'lock_x'});
$lock_x->finish;
sleep 1;
reg(q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'lock_y'});
$lock_y->finish;
my ($b6_pair) = holder_start($b6, '1.3');
my ($n7_pair) = holder_start($n7, '1.4');
isnt($b6_pair, $n7_pair,
	'a 1.3 server and a 1.4 server that claim at the same moment get distinct worker ids');
my ($b6_worker) = $b6_pair =~ /\|(\d+)$/;
my ($n7_worker) = $n7_pair =~ /\|(\d+)$/;
is(row13($n7_worker), 'n7|f|f|t', "the 1.3 table holds n7's for it for good");
is(row13($b6_worker), 'b6|f|f|f', "and b6's for b6");
write_registry_conf($n7, '1.4');
$n7->reload;

# 9. s2's claim passes once its reclaim lease is over
($pair) = holder_start($s2, '1.4', 120);
is($pair, '5|1', 's2 takes its worker id back once its 1.3 reclaim lease is over');
is( reg(qq{
SELECT claimed_at >= '$s2_checked_in'::timestamptz + interval '1 min'
FROM snowflake_registry.claims WHERE datacenter_id = 5 AND worker_id = 1}),
	't', 'not before its last 1.3 check-in plus its reclaim lease');
$s2->safe_psql('postgres', 'ALTER EXTENSION snowflake UPDATE');

# 10. b6 moves to 1.4: its worker id at once
$b6->stop;
install_14($b6);
write_registry_conf($b6, '1.4');
$b6->start;
($pair, $took) = holder_start($b6, '1.4');
is($pair, $b6_pair, '1.4 server b6 takes its worker id back');
cmp_ok($took, '<', 30, 'at once, without a lease to wait for');
$b6->safe_psql('postgres', 'ALTER EXTENSION snowflake UPDATE');

# 11. Every server runs 1.4: the registry's snowflake is updated
is( reg(q{SELECT count(*) FROM snowflake_registry.status WHERE state LIKE 'legacy%'}),
	'0', 'no claim of a 1.3 server is left');
reg('ALTER EXTENSION snowflake UPDATE');
reg('GRANT snowflake_worker TO s1, s2, s3, n4, n5, b6, n7');
is( extversion($reg) . ' ' . reg(q{SELECT to_regclass('snowflake_claims') IS NULL}),
	'1.4 t',
	'at the end ALTER EXTENSION snowflake UPDATE succeeds on the registry, and drops the 1.3 registry'
);
is( reg(q{
SELECT string_agg(worker_id || ':' || owner || ':' || state, ' ' ORDER BY worker_id)
FROM snowflake_registry.status WHERE datacenter_id = 5}),
	join(' ', '0:s1:held 1:s2:held 2:n5:held 3:n4:held 4:s3:held',
		sort map { "$_:held" } "$b6_worker:b6", "$n7_worker:n7"),
	'the registry keeps every claim');
sleep 3;
stop_loads();

# How each 1.3 claim passed, by the 1.3 row at that moment: to its own
# server after a clean shutdown, by a release it confirmed, or after its
# reclaim lease
note "the registry's log:\n"
  . reg(q{SELECT * FROM pass_log ORDER BY at});
is( reg(q{
SELECT string_agg(worker_id || ': ' ||
	CASE WHEN idle_13 AND released_13 THEN 'confirmed release'
		 WHEN idle_13 AND old_system = new_system THEN 'clean shutdown'
		 WHEN at >= checked_in_13 + lease THEN 'reclaim lease'
		 ELSE 'NONE OF THE 1.3 RULES' END, ', ' ORDER BY worker_id)
FROM pass_log WHERE kind = '1.3 claim passed'}),
	"0: clean shutdown, 1: reclaim lease, 2: confirmed release, 4: clean shutdown, $b6_worker: clean shutdown",
	'every 1.3 claim passed only by its clean shutdown, a confirmed release or its reclaim lease'
);
is( reg(q{
SELECT count(*) FROM pass_log m
WHERE kind = '1.3 server took a pair of the mirror'
   OR (kind = 'mirror over a 1.3 claim'
	   AND NOT EXISTS (SELECT FROM pass_log p
					   WHERE p.kind = '1.3 claim passed' AND p.xid = m.xid
						 AND p.worker_id = m.worker_id))}),
	'0',
	'the mirror replaced no 1.3 claim but one passing in that transaction, and no 1.3 server took a pair of the mirror'
);

# All the IDs, on one server
reg('CREATE DATABASE hub');
$reg->safe_psql('hub',
	'CREATE TABLE ids (id bigint, server text, life timestamptz, at timestamptz)');
foreach my $name (sort keys %node)
{
	my $file = "$tmp/ids_$name.copy";
	$node{$name}->safe_psql('postgres', "COPY ids TO '$file'");
	$reg->safe_psql('hub', "COPY ids FROM '$file'");
	is(join("\n", server_troubles($node{$name})), '', "no process of $name crashed");
}
my ($total, $distinct) = split /\|/,
  $reg->safe_psql('hub', 'SELECT count(*), count(DISTINCT id) FROM ids');
note "$total IDs from " . scalar(keys %node) . ' servers';
cmp_ok($total, '>', 10_000, 'the servers generated under load');
is($distinct, $total, 'no ID repeats across the servers')
  or diag $reg->safe_psql(
	'hub', q{
SELECT id, string_agg(server || ' ' || life, ', ') FROM ids
GROUP BY id HAVING count(*) > 1 ORDER BY id LIMIT 20});

# For each pair, the IDs of its holders, in the order the registry handed
# the pair on: one run each, none interleaved with another's
my %runs;
foreach my $row (
	split /\n/,
	$reg->safe_psql(
		'hub', q{
SELECT pair, holder, min(id), max(id), count(*) FROM (
	SELECT pair, holder, id,
		row_number() OVER (PARTITION BY pair ORDER BY id)
		- row_number() OVER (PARTITION BY pair, holder ORDER BY id) AS run
	FROM (SELECT ((id >> 17) & 31) || '|' || ((id >> 12) & 31) AS pair,
				 server || '#' || (extract(epoch FROM life) * 1000000)::bigint
				   AS holder,
				 id
		  FROM ids) i) r
GROUP BY pair, holder, run ORDER BY pair, min(id)}))
{
	my ($p, $holder, $min, $max, $count) =
	  $row =~ /^(\d+\|\d+)\|(.*)\|(\d+)\|(\d+)\|(\d+)$/
	  or die "unexpected row: $row";
	push @{ $runs{$p} }, $holder;
	note "$p: " . ($holder_label{$holder} // $holder) . ": $count IDs, $min to $max";
}
is_deeply(\%runs, \%holders,
	'for each pair, the holders\' IDs lie in disjoint ranges, in the order the registry handed the pair on'
) or diag explain { runs => \%runs, holders => \%holders, labels => \%holder_label };

# Each server's IDs increase from one start to the next
my (@not_increasing, %last_max);
foreach my $row (
	split /\n/,
	$reg->safe_psql(
		'hub', q{
SELECT server, life, min(id), max(id) FROM ids GROUP BY server, life
ORDER BY server, life}))
{
	my ($server, $life, $min, $max) = split /\|/, $row;
	push @not_increasing, "$server from its start at $life: $min"
	  if defined $last_max{$server} && $min <= $last_max{$server};
	$last_max{$server} = $max;
}
is("@not_increasing", '', 'each server\'s IDs increase across its starts');

$_->stop foreach values %node;
$reg->stop;
done_testing();
