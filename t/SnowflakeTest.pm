
# Copyright (c) 2026, the snowflake authors

=pod

=head1 NAME

SnowflakeTest - helpers for the snowflake TAP tests that move a server's clock

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use SnowflakeTest;

  my $node = snowflake_node('main');
  start_node($node);
  set_clock($node, -5);
  check_clock_offset($node, -5, 'the server clock is 5 s behind');

=head1 DESCRIPTION

The tests run real servers under Debian's libfaketime.  The postmaster is
started with libfaketime preloaded and FAKETIME_TIMESTAMP_FILE pointing at a
per-node file that holds an offset such as "-5" (seconds; libfaketime wants
the sign) and optionally a rate such as "x0.05".  Rewriting the file moves the
clock of the running server: with the default cache every process rereads it
within a second, with C<no_cache> at its next clock read.

Only the server is faked: the variables are set while pg_ctl starts the
postmaster, and FAKETIME_ONLY_CMDS limits the faking to the "postgres"
program (the postmaster and every process it forks) and pg_ctl, so that psql,
pgbench and the test script itself keep the real clock.  A clock with a rate
must start at offset 0.  CLOCK_MONOTONIC is not faked,
so PostgreSQL's own timeouts and latch waits keep working.

Because a misconfigured libfaketime would make these tests pass vacuously,
each test checks the server's clock against the test's own with
check_clock_offset() (or check_clock_rate()).

libfaketime 0.9.10 reads the real clock inside its select() wrapper, and up
to PostgreSQL 15 the postmaster forks the autovacuum launcher, the WAL writer
and the background workers (snowflake's among them) from signal handlers
that run inside its select(): those children would run on the real clock.
So a small preload library, t/faketime_shim.c, is built at the first
start with the compiler of C<pg_config --cc> and put before libfaketime in
LD_PRELOAD; its select() bypasses libfaketime's.  It also answers a clock
read made inside a signal handler (PostgreSQL's SIGALRM handler makes one
while a timeout is active) without libfaketime, whose reading of the clock
file allocates memory there and corrupted a registry's heap (see that
file).  The first
start_node() of each test (or faketime_env()) checks with a throwaway node,
a test of its own, that the processes the postmaster forks from its signal
handlers are on the faked clock.

libfaketime is looked for in the directory of the machine's architecture
(as dpkg-architecture or gcc name it), then in any library directory; the
environment variable LIBFAKETIME names it explicitly.  Where it is missing,
a test that moves the clock calls skip_without_libfaketime() and is skipped;
start_node() then starts servers on the real clock.

=cut

package SnowflakeTest;

use strict;
use warnings;

use Exporter 'import';
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(
  skip_without_libfaketime
  snowflake_node
  snowflake_standby
  snowflake_registry
  faketime_node
  registry_conninfo
  fleet_doc_registry_sql
  fleet_doc_login_sql
  registry_nodes_conninfo
  restore_data_dir
  next_pair
  wait_for_pair
  wait_for_refusal
  generate_for
  start_id_stream
  wait_for_stream
  stop_id_stream
  stream_ids
  check_pair_holders
  check_takeover
  cut_off
  check_cut_off_handover
  registry_claim
  registry_pair
  registry_ms
  set_clock
  start_node
  restart_node
  faketime_env
  server_clock_offset
  check_clock_offset
  check_clock_rate
  crash_node
  wait_for_connections
  assert_running
  server_troubles
  mark_writer_pid
  registry_worker_pid
  signal_process
  psql_timed
  start_waiter
  cancel_waiter
  wait_event_of
  wait_for_wait_event
  alter_system
  check_strictly_increasing
  id_ms
  id_unix_ms
  read_mark_file
  mark_file_fields
  write_mark_file
  mark_file_bytes
  crc32c
  SNOWFLAKE_EPOCH_UNIX_MS
  MARK_MAGIC
  MARK_VERSION
);

# the path of libfaketime's preload library, or undef where it is missing
our $libfaketime = _find_libfaketime();

# snowflake.epoch's default, Twitter's epoch, in ms since 1970
use constant SNOWFLAKE_EPOCH_UNIX_MS => 1288834974657;

# the mark file's header
use constant MARK_MAGIC   => 0x534E4F57;
use constant MARK_VERSION => 2;

# per node (by name): clock file, libfaketime cache mode, clock rate
my %clock_file;
my %no_cache;
my %clock_rate;

# Debian installs libfaketime into the multiarch library directory, e.g.
# /usr/lib/x86_64-linux-gnu/faketime on amd64.
sub _find_libfaketime
{
	my @candidates;

	return -f $ENV{LIBFAKETIME} ? $ENV{LIBFAKETIME} : undef
	  if defined $ENV{LIBFAKETIME};

	foreach my $cmd ('dpkg-architecture -qDEB_HOST_MULTIARCH',
		'gcc -print-multiarch')
	{
		my $multiarch = `$cmd 2>/dev/null` // '';
		chomp $multiarch;
		push @candidates, "/usr/lib/$multiarch/faketime/libfaketime.so.1"
		  if $multiarch ne '';
	}
	push @candidates, glob('/usr/lib/*/faketime/libfaketime.so.1'),
	  '/usr/lib/faketime/libfaketime.so.1',
	  '/usr/local/lib/faketime/libfaketime.so.1';
	foreach my $path (@candidates)
	{
		return $path if -f $path;
	}
	return undef;
}

=pod

=head1 FUNCTIONS

=over

=item skip_without_libfaketime()

Skip the whole test, with a message that says why, where libfaketime is not
installed.  Call it before the first test.

=cut

sub skip_without_libfaketime
{
	plan skip_all => 'libfaketime is not installed (Debian package '
	  . '"libfaketime"; or set LIBFAKETIME to its path): this test moves '
	  . 'the server\'s clock with it'
	  unless defined $libfaketime;
	return;
}

=pod

=item snowflake_node(name, %params)

A new, initialised node that preloads snowflake, with a clock file set to
offset 0.  Parameters: C<allows_streaming> (1, or 'logical'), C<no_cache> (libfaketime rereads
the clock file at every clock read instead of once a second), C<offset> and
C<rate> (the initial clock, see set_clock), C<extra_conf>, and C<registry>,
a registry node (see snowflake_registry): then the node claims its worker id
there instead of setting it, as the login C<login> (default: the node's
name, which registry_conninfo creates on the registry), and extends its
claim every 200 ms.  With C<< node_ids => 0 >>, the node
sets neither id and takes the defaults, for a test that writes them itself.
C<install_path> runs another installation's binaries (see
PostgreSQL::Test::Cluster->new), and C<initdb_extra> lists extra initdb
options; either makes the node run initdb rather than copy a template.

=cut

sub snowflake_node
{
	my ($name, %params) = @_;

	my $node = PostgreSQL::Test::Cluster->new($name,
		defined $params{install_path}
		? (install_path => $params{install_path})
		: ());
	$node->init(
		allows_streaming => $params{allows_streaming} // 0,
		force_initdb => defined $params{install_path} ? 1 : 0,
		defined $params{initdb_extra}
		? (extra => $params{initdb_extra})
		: ());
	my $worker_conf =
	  $params{registry}
	  ? "snowflake.registry = '"
	  . registry_conninfo($params{registry}, $params{login} // $name) . "'\n"
	  . "snowflake.registry_check_in_interval = 200\n"
	  : "snowflake.worker_id = 11\n";
	my $ids_conf =
	  ($params{node_ids} // 1)
	  ? "snowflake.datacenter_id = 5\n$worker_conf"
	  : '';
	$node->append_conf(
		'postgresql.conf', qq{
shared_preload_libraries = 'snowflake'
$ids_conf
log_min_messages = log
} . ($params{extra_conf} // ''));
	_setup_clock($node, %params);
	return $node;
}

=pod

=item faketime_node(name, %params)

A started snowflake_node (same parameters) under libfaketime, whose clock
the test has checked: with C<rate>, check_clock_rate at that rate, else
check_clock_offset at C<offset> (default 0).  That check is one test, named
C<clock_test> or after what it checks.  Where libfaketime is missing the
whole test is skipped, as with skip_without_libfaketime, so call it before
the first test (or after skip_without_libfaketime).

=cut

sub faketime_node
{
	my ($name, %params) = @_;
	my $clock_test = delete $params{clock_test};

	skip_without_libfaketime();
	my $node = snowflake_node($name, %params);
	start_node($node);
	if (defined $params{rate})
	{
		check_clock_rate($node, $params{rate},
			$clock_test
			  // "server clock of $name runs at $params{rate} times real speed"
		);
	}
	else
	{
		my $offset = $params{offset} // 0;
		check_clock_offset($node, $offset,
			$clock_test
			  // ($offset == 0
				? "server clock of $name starts at the real time"
				: "server clock of $name starts $offset s off the real time"));
	}
	return $node;
}

=pod

=item snowflake_standby(primary, backup_name, name, %params)

A streaming standby of primary made from backup_name, with its own clock file
(parameters as for snowflake_node).  With C<clone>, a copy of the primary
that starts as a primary itself, as a pg_basebackup or a VM snapshot started
beside its original would.

=cut

sub snowflake_standby
{
	my ($primary, $backup_name, $name, %params) = @_;

	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($primary, $backup_name,
		has_streaming => $params{clone} ? 0 : 1);
	_setup_clock($node, %params);
	return $node;
}

=pod

=item snowflake_registry(name, %params)

A started server that serves as the worker id registry: no preload,
CREATE EXTENSION snowflake_registry in database postgres, with a lease of
C<lease> (default 2 s), written into the new install's settings as if it
had always been its lease, and the fleet's layout C<layout> (default
Twitter's, as docs/fleet.md sets it) set by snowflake_registry.configure.  C<init> is a
hash of parameters for PostgreSQL::Test::Cluster's init (such as
C<allows_streaming> and C<has_archiving>, for a registry with standbys or
an archive), and C<extra_conf> is added to its postgresql.conf.  With C<clock>
(or any of C<offset>, C<rate> and C<no_cache>, as for snowflake_node), it
runs under libfaketime with a clock file of its own, so that set_clock
moves the registry's clock; start it again with start_node after a stop.
Without them, it runs on the real clock.

The registry's roles are made by the SQL the documentation gives operators,
read from docs/fleet.md's section "The registry" as it stands (the password
placeholder dropped: the test servers trust local connections), so that the
tests run with exactly the grants users are told to give.

=item registry_conninfo(registry[, login])

The libpq connection string a server uses to claim from a registry node, as
login (default: the example login of docs/fleet.md).  A login that the
registry does not have yet is made there as docs/fleet.md makes one, if
the registry runs.

=item fleet_doc_registry_sql()

docs/fleet.md's SQL that sets up a registry database and its roles, as
snowflake_registry runs it (without the password placeholder), for a test
that makes its registry another way, such as a Patroni cluster.

=item fleet_doc_login_sql(login)

docs/fleet.md's statement that makes a server's login, for login.

=cut

sub fleet_doc_registry_sql
{
	my $doc = slurp_file(dirname(__FILE__) . '/../docs/fleet.md');
	my ($sql) = $doc =~
	  /^```sql\n(CREATE EXTENSION snowflake_registry;\n(?:(?!```).)*?-- what every server's login may do.*?)^```$/ms
	  or die 'docs/fleet.md has no registry setup block';
	$sql =~ s/ PASSWORD '\.\.\.'//
	  or die "docs/fleet.md's registry setup has no password placeholder";
	return $sql;
}

sub fleet_doc_login_sql
{
	my ($login) = @_;
	my ($sql) = fleet_doc_registry_sql() =~ /^(CREATE ROLE server_paris_1 LOGIN [^;]*;)$/m
	  or die 'docs/fleet.md has no server login in its registry setup';
	$sql =~ s/server_paris_1/"$login"/;
	return $sql;
}

sub snowflake_registry
{
	my ($name, %params) = @_;

	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $params{init} // {} });
	$node->append_conf('postgresql.conf', $params{extra_conf})
	  if defined $params{extra_conf};
	if (grep { defined $params{$_} } qw(clock offset rate no_cache))
	{
		_setup_clock($node, %params);
		start_node($node);
	}
	else
	{
		$node->start;
	}
	$node->safe_psql('postgres', fleet_doc_registry_sql());
	# the lease as the install's own, before any call: configure() would keep
	# the default 30 s as the lease before it (a copy of an install may have
	# made promises under it), and every test's first claim would start 31 s
	# ahead
	$node->safe_psql('postgres',
		"UPDATE snowflake_registry.settings SET lease = '"
		  . ($params{lease} // '2 s') . "'");
	$node->safe_psql('postgres',
		"SELECT snowflake_registry.configure(layout => '$params{layout}')")
	  if defined $params{layout};
	return $node;
}

sub registry_conninfo
{
	my ($registry, $login) = @_;
	$login //= 'server_paris_1';
	# a registry that is down cannot make it: the test made it before
	eval { $registry->safe_psql('postgres', qq{
DO \$\$ BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$login') THEN
		EXECUTE \$sql\$@{[fleet_doc_login_sql($login)]}\$sql\$;
	END IF;
END \$\$}) };
	return
	    'host='
	  . $registry->host
	  . ' port='
	  . $registry->port
	  . " dbname=postgres user=$login connect_timeout=2";
}

=pod

=item registry_nodes_conninfo(login, nodes...)

The libpq connection string of a login to a registry that runs on several
nodes (a primary and its standbys), in that order: libpq connects to the
first that accepts writes.  The login must exist on the registry.

=cut

sub registry_nodes_conninfo
{
	my ($login, @nodes) = @_;
	return
	    'host='
	  . join(',', map { $_->host } @nodes)
	  . ' port='
	  . join(',', map { $_->port } @nodes)
	  . " dbname=postgres user=$login connect_timeout=2"
	  . ' target_session_attrs=read-write';
}

=pod

=item restore_data_dir(node, path)

Replace the data directory of a stopped node with a copy of path (a file
copy or a base backup, of this node or of another), as an operator
restores one: the node keeps its port and socket directory, and starts as a
primary (the copy's standby.signal and recovery.signal are removed).

=cut

sub restore_data_dir
{
	my ($node, $from) = @_;
	system_or_bail('rm', '-rf', $node->data_dir);
	system_or_bail('cp', '-a', $from, $node->data_dir);
	chmod(0700, $node->data_dir)
	  or die "could not set the permissions of " . $node->data_dir . ": $!";
	unlink($node->data_dir . "/$_") foreach qw(standby.signal recovery.signal);
	$node->append_conf('postgresql.conf',
		'port = '
		  . $node->port
		  . "\nunix_socket_directories = '"
		  . $node->host . "'");
	return;
}

=pod

=item next_pair(node)

"datacenter_id|worker_id" of a new ID from the node, or undef when
snowflake_next_id() fails; in list context also psql's stderr.  Creates the
extension first if needed.

=item wait_for_pair(node[, timeout_seconds])

next_pair, retried until it succeeds (default: the TAP timeout).  Returns the
pair and the seconds it took, or undef when it never succeeded.

=cut

sub next_pair
{
	my ($node) = @_;
	my ($stdout, $stderr);
	$node->psql(
		'postgres', q{
\set VERBOSITY verbose
CREATE EXTENSION IF NOT EXISTS snowflake;
SELECT datacenter_id || '|' || worker_id FROM snowflake_parse(snowflake_next_id());},
		stdout => \$stdout,
		stderr => \$stderr);
	my $pair = $stdout =~ /^(\d+\|\d+)$/m ? $1 : undef;
	return wantarray ? ($pair, $stderr) : $pair;
}

sub wait_for_pair
{
	my ($node, $timeout) = @_;
	$timeout //= $PostgreSQL::Test::Utils::timeout_default;
	my $start = time();
	while (1)
	{
		my $pair = next_pair($node);
		return ($pair, time() - $start) if defined $pair;
		return (undef, time() - $start) if time() - $start > $timeout;
		usleep(50_000);
	}
}

=pod

=item wait_for_refusal(node[, timeout_seconds[, pattern]])

next_pair, retried while it succeeds (for at most timeout_seconds, default:
the TAP timeout).  Returns psql's stderr of the first call that failed, or
undef when none did.  With a pattern, a failure that does not match it is
retried too (a refusal for another reason, on the way to the one awaited),
and the last stderr is returned when none matched.

=cut

sub wait_for_refusal
{
	my ($node, $timeout, $pattern) = @_;
	$timeout //= $PostgreSQL::Test::Utils::timeout_default;
	my $start = time();
	my $last;
	while (time() - $start <= $timeout)
	{
		my ($pair, $err) = next_pair($node);
		if (!defined $pair)
		{
			return $err if !defined $pattern || $err =~ $pattern;
			$last = $err;
		}
		usleep(50_000);
	}
	return $last;
}

=pod

=item generate_for(seconds, nodes...)

Calls next_pair on each node in turn for the given seconds.  Returns two
hash references: by node name, the pairs each one generated with (a hash of
pair to count), and each one's last error.

=cut

sub generate_for
{
	my ($seconds, @nodes) = @_;
	my (%pairs, %errors);
	my $end = time() + $seconds;
	while (time() < $end)
	{
		foreach my $node (@nodes)
		{
			my ($pair, $err) = next_pair($node);
			if (defined $pair)
			{
				$pairs{ $node->name }{$pair}++;
			}
			else
			{
				$errors{ $node->name } = $err;
			}
		}
	}
	return (\%pairs, \%errors);
}

=pod

=item start_id_stream(node, label[, batch])

A session of the node, in the background, that draws IDs until
stop_id_stream: snowflake_next_ids(batch) (default 10) about every 10 ms,
each batch committed on its own into the table snowflake_stream_ids, under
the stream's label, numbered in the order it was drawn; each refusal goes
into snowflake_stream_errors, numbered in the same sequence.  So every ID
the stream got is in the table, and survives a crash of the node; no ID of
the node's other sessions is.  Creates the tables, the procedure that draws
(snowflake_stream) and the extension where they are missing (on a
standby: on its primary, before).  Returns the stream.

=item wait_for_stream(stream, condition)

Polls the stream's node until the SQL condition holds, in which C<ids> and
C<errors> stand for the stream's rows of snowflake_stream_ids and
snowflake_stream_errors (such as C<(SELECT count(*) FROM ids) E<gt> 10>).
True when it did within the TAP timeout.

=item stop_id_stream(stream)

Stops the stream and waits for its session to end.  On a node that is no
longer running (crashed), only waits for the session.

=item stream_ids(stream[, condition])

The IDs the stream got (those that meet the SQL condition on the columns n
and id, if given), in the order drawn.  The node must be running.

=cut

sub start_id_stream
{
	my ($node, $label, $batch) = @_;
	$batch //= 10;
	die "start_id_stream: \"$label\" is not a plain name"
	  unless $label =~ /^\w+$/;

	if ($node->safe_psql('postgres',
			"SELECT to_regproc('snowflake_stream') IS NULL") eq 't')
	{
		$node->safe_psql(
			'postgres', q{
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE TABLE snowflake_stream_ids (label text, n bigint, id bigint);
CREATE TABLE snowflake_stream_errors (label text, n bigint, message text);
CREATE TABLE snowflake_stream_stop (label text);
CREATE PROCEDURE snowflake_stream(label text, batch integer)
LANGUAGE plpgsql AS $$
DECLARE
	n bigint := 0;
BEGIN
	WHILE NOT EXISTS (SELECT FROM snowflake_stream_stop s
					  WHERE s.label = snowflake_stream.label) LOOP
		BEGIN
			INSERT INTO snowflake_stream_ids
			SELECT label, n + g.o, g.i
			FROM snowflake_next_ids(batch) WITH ORDINALITY AS g(i, o);
			n := n + batch;
		EXCEPTION WHEN OTHERS THEN
			n := n + 1;
			INSERT INTO snowflake_stream_errors
			VALUES (label, n, SQLSTATE || ': ' || SQLERRM);
		END;
		COMMIT;
		PERFORM pg_sleep(0.01);
	END LOOP;
END
$$;});
	}
	my $stream = {
		node  => $node,
		label => $label,
		out   => '',
		err   => '',
		timer => IPC::Run::timeout(24 * 3600)
	};
	$stream->{harness} = IPC::Run::start(
		[
			'psql', '-X', '-q', '-d', $node->connstr('postgres'),
			'-c', "CALL snowflake_stream('$label', $batch)"
		],
		'<', '/dev/null', '>', \$stream->{out}, '2>', \$stream->{err},
		$stream->{timer});
	note "started a stream of IDs on node " . $node->name . ": $label";
	return $stream;
}

# the stream's rows of its tables, as CTEs "ids" and "errors"
sub _stream_ctes
{
	my ($stream) = @_;
	return "WITH ids AS (SELECT n, id FROM snowflake_stream_ids "
	  . "WHERE label = '$stream->{label}'), "
	  . "errors AS (SELECT n, message FROM snowflake_stream_errors "
	  . "WHERE label = '$stream->{label}') ";
}

sub wait_for_stream
{
	my ($stream, $condition) = @_;
	return $stream->{node}
	  ->poll_query_until('postgres', _stream_ctes($stream) . "SELECT $condition");
}

sub stop_id_stream
{
	my ($stream) = @_;
	my $node = $stream->{node};
	$node->safe_psql('postgres',
		"INSERT INTO snowflake_stream_stop VALUES ('$stream->{label}')")
	  if defined $node->{_pid};
	$stream->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	eval { $stream->{harness}->finish; };
	note "stopped the stream $stream->{label} of node "
	  . $node->name
	  . ($@ ne '' ? " ($@)" : '')
	  . ($stream->{err} ne '' ? ": $stream->{err}" : '');
	return;
}

sub stream_ids
{
	my ($stream, $condition) = @_;
	return split /\n/,
	  $stream->{node}->safe_psql('postgres',
		_stream_ctes($stream)
		  . 'SELECT id FROM ids'
		  . (defined $condition ? " WHERE $condition" : '')
		  . ' ORDER BY n');
}

=pod

=item check_pair_holders(test_name, holders, %params)

Passes if the IDs of several holders of worker ids, a hash reference of a
name to its IDs, never meet: no ID appears twice, and, for each pair (read
with the layout of C<datacenter_bits>, C<worker_bits> and
C<sequence_bits>, Twitter's by default), the IDs sorted by time fall into
one run per holder, and every run ends at a millisecond before the next one
begins.  So each holder must have held each pair at most once.  Returns the
runs, as "pair name: count IDs, ms first..last" lines (ms since the
layout's epoch).

=cut

sub check_pair_holders
{
	my ($test_name, $holders, %params) = @_;
	my $sequence_bits   = $params{sequence_bits}   // 12;
	my $worker_bits     = $params{worker_bits}     // 5;
	my $datacenter_bits = $params{datacenter_bits} // 5;
	my $time_shift = $sequence_bits + $worker_bits + $datacenter_bits;
	my (%by_pair, %seen, @problems, @runs);

	foreach my $name (sort keys %$holders)
	{
		foreach my $id (@{ $holders->{$name} })
		{
			push @problems, "ID $id is held by $seen{$id} and $name"
			  if exists $seen{$id};
			$seen{$id} //= $name;
			my $pair =
			  (($id >> ($sequence_bits + $worker_bits)) &
				  ((1 << $datacenter_bits) - 1)) . '|'
			  . (($id >> $sequence_bits) & ((1 << $worker_bits) - 1));
			push @{ $by_pair{$pair} }, [ $id, $name ];
		}
	}
	foreach my $pair (sort keys %by_pair)
	{
		my @pair_runs;
		foreach my $entry (sort { $a->[0] <=> $b->[0] } @{ $by_pair{$pair} })
		{
			my ($id, $name) = @$entry;
			my $ms = $id >> $time_shift;
			if (!@pair_runs || $pair_runs[-1]{name} ne $name)
			{
				push @pair_runs,
				  { name => $name, first => $ms, last => $ms, count => 0 };
			}
			$pair_runs[-1]{last} = $ms;
			$pair_runs[-1]{count}++;
		}
		my %runs_of;
		$runs_of{ $_->{name} }++ foreach @pair_runs;
		push @problems, map { "$_ holds $pair in $runs_of{$_} runs of IDs" }
		  grep { $runs_of{$_} > 1 } sort keys %runs_of;
		foreach my $i (1 .. $#pair_runs)
		{
			push @problems,
			  "on $pair, $pair_runs[$i]{name} begins at ms $pair_runs[$i]{first}, "
			  . "where $pair_runs[$i - 1]{name} ended"
			  if $pair_runs[$i]{first} <= $pair_runs[ $i - 1 ]{last};
		}
		push @runs, map {
			"$pair $_->{name}: $_->{count} IDs, ms $_->{first}..$_->{last}"
		} @pair_runs;
	}
	# a few of them, where holders interleave
	my @shown =
	  @runs > 12
	  ? (@runs[ 0 .. 5 ], '... ' . (@runs - 12) . ' more runs ...',
		@runs[ -6 .. -1 ])
	  : @runs;
	ok(!@problems, $test_name)
	  or diag join("\n",
		(@problems > 10 ? (@problems[ 0 .. 9 ], '...') : @problems),
		'runs:', @shown);
	note "runs of IDs by time: " . join('; ', @shown);
	return @runs;
}

=pod

=item cut_off(registry, node)

Cuts the node off from the registry: stops its registry worker (SIGSTOP),
once no call of the node's login (its name) is under way on the registry,
so that the registry records nothing more for it.  Returns what
check_cut_off_handover needs to let it go on.

=item check_cut_off_handover(registry, cut, old, new, pair, what, %layout)

With the holder of pair cut off (cut, from cut_off) and something done
that lets its claim pass to the server of stream new: waits until new
generates, and until the cut-off holder's stream old is refused because
its IDs would pass the promise the registry recorded; lets the holder's
registry worker go on, and waits until its log says that its claim moved;
stops both streams; then check_pair_holders (with %layout) and
check_takeover on their IDs.  Each wait is a test, named after what.

=cut

sub cut_off
{
	my ($registry, $node) = @_;
	my $cut = {
		node       => $node,
		pid        => registry_worker_pid($node, wait => 1),
		log_offset => -s $node->logfile
	};
	signal_process('STOP', $cut->{pid},
		'the registry worker of ' . $node->name);
	$registry->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE usename = '"
		  . $node->name
		  . "' AND state <> 'idle'")
	  or die 'the call of ' . $node->name . ' to the registry did not end';
	return $cut;
}

sub check_cut_off_handover
{
	my ($registry, $cut, $old, $new, $pair, $what, %layout) = @_;
	my ($dc, $worker) = split /\|/, $pair;

	ok(wait_for_stream($new, '(SELECT count(*) FROM ids) > 0'),
		"$what: the new holder generates");
	ok( wait_for_stream(
			$old,
			"(SELECT count(*) FROM errors WHERE message = '55000: could not "
			  . 'generate a snowflake ID: the ID would pass the time the '
			  . "registry recorded for this server''s claim') > 0"),
		"$what: the cut-off holder stops at its promise, and says so");
	signal_process('CONT', $cut->{pid},
		'the registry worker of ' . $cut->{node}->name);
	ok( $cut->{node}->wait_for_log(
			qr/claim on snowflake worker id $worker of datacenter $dc has moved to another start or login/,
			$cut->{log_offset}),
		"$what: the old holder, back in touch, learns that its claim moved");
	stop_id_stream($_) foreach ($old, $new);
	my @old_ids = stream_ids($old);
	my @new_ids = stream_ids($new);
	check_pair_holders(
		"$what: no ID twice, the holders' ranges of ID time disjoint",
		{ $old->{label} => \@old_ids, $new->{label} => \@new_ids }, %layout);
	check_takeover($registry, $pair, $what, \@old_ids, \@new_ids);
	return;
}

=pod

=item registry_claim(registry, pair, columns)

The columns (SQL, "|"-separated) of the registry's row for pair
"datacenter|worker".

=cut

sub registry_claim
{
	my ($registry, $pair, $columns) = @_;
	my ($dc, $worker) = split /\|/, $pair;
	return $registry->safe_psql('postgres',
		"SELECT $columns FROM snowflake_registry.claims "
		  . "WHERE datacenter_id = $dc AND worker_id = $worker");
}

=pod

=item registry_pair(registry, login)

Waits until the login holds a claim on the registry (within the TAP
timeout, else dies), and returns its pair, "datacenter|worker".

=item registry_ms(registry, timestamp)

A timestamptz of the registry, as milliseconds since 1970 rounded down (as
the registry worker reads a promise).

=cut

sub registry_pair
{
	my ($registry, $login) = @_;
	my $held = "FROM snowflake_registry.claims WHERE owner = '$login' "
	  . "AND state = 'held'";
	$registry->poll_query_until('postgres', "SELECT count(*) = 1 $held")
	  or die "login $login did not claim a worker id";
	return $registry->safe_psql('postgres',
		"SELECT datacenter_id || '|' || worker_id $held");
}

sub registry_ms
{
	my ($registry, $timestamp) = @_;
	return $registry->safe_psql('postgres',
		"SELECT floor(extract(epoch FROM '$timestamp'::timestamptz) * 1000)::bigint"
	);
}

=pod

=item check_takeover(registry, pair, what, old_ids, new_ids)

After a change of holder of pair, with the IDs of the old holder and of the
new one (array references), three tests named after what: the registry
gave the claim over only once the old holder's promise, which became the
new holder's floor, was behind its clock; the old holder's IDs end at or
below that promise; the new holder's begin above it.  The IDs have 22 bits
below their time, as Twitter's layout has (see id_unix_ms).

=cut

sub check_takeover
{
	my ($registry, $pair, $what, $old_ids, $new_ids) = @_;
	my ($passed, $floor) =
	  split /\|/, registry_claim($registry, $pair, 'claimed_at > floor, floor');
	my $floor_ms = registry_ms($registry, $floor);
	my ($newest) = sort { $b <=> $a } map { id_unix_ms($_) } @$old_ids;
	my ($oldest) = sort { $a <=> $b } map { id_unix_ms($_) } @$new_ids;

	is($passed, 't',
		"$what: the registry gave the claim over only once the old holder's promise had passed"
	);
	cmp_ok($newest // 0, '<=', $floor_ms,
		"$what: the old holder's IDs stop at its promise");
	cmp_ok($oldest // 0, '>', $floor_ms,
		"$what: the new holder's IDs begin above it");
	return;
}

sub _setup_clock
{
	my ($node, %params) = @_;

	$clock_file{ $node->name } = $node->basedir . '/faketime.rc';
	$no_cache{ $node->name }   = $params{no_cache} ? 1 : 0;
	set_clock($node, $params{offset} // 0, $params{rate});
	return;
}

=pod

=item set_clock(node, offset_seconds[, rate])

Set the node's clock to run offset_seconds from the real clock (and at rate
times its speed, if given).  The file is replaced atomically, so that
libfaketime never reads half of it.

=cut

sub set_clock
{
	my ($node, $offset, $rate) = @_;
	my $file = $clock_file{ $node->name }
	  or die "node " . $node->name . " has no clock file";
	my $spec = ($offset < 0 ? '-' : '+') . abs($offset);
	$spec .= " x$rate" if defined $rate;
	$clock_rate{ $node->name } = $rate;

	open my $fh, '>', "$file.tmp" or die "could not write $file.tmp: $!";
	print $fh "$spec\n";
	close $fh                  or die "could not write $file.tmp: $!";
	rename("$file.tmp", $file) or die "could not rename to $file: $!";
	note "clock of node " . $node->name . " set to \"$spec\"";
	return;
}

# the preload library that keeps libfaketime's select() from leaving the
# children the postmaster forks from its signal handlers on the real clock,
# and libfaketime out of clock reads in signal handlers (see
# t/faketime_shim.c), built once per test; undef where it could not be
# built, which the check of _check_children_faked then reports where it
# matters
my $faketime_shim;
my $faketime_shim_tried;

sub _faketime_shim
{
	return $faketime_shim if $faketime_shim_tried;
	$faketime_shim_tried = 1;

	my $src = dirname(__FILE__) . '/faketime_shim.c';
	my $cc  = eval { (run_command([ 'pg_config', '--cc' ]))[0] } // '';
	chomp $cc;
	my @cc = $cc =~ /\S/ ? split(' ', $cc) : ('cc');
	my $so = PostgreSQL::Test::Utils::tempdir('faketime_shim')
	  . '/faketime_shim.so';
	my ($out, $err) = ('', '');
	my $built = eval {
		IPC::Run::run(
			[ @cc, '-shared', '-fPIC', '-O2', '-o', $so, $src, '-ldl' ],
			'>', \$out, '2>', \$err);
	};
	if ($built && -f $so)
	{
		$faketime_shim = $so;
	}
	else
	{
		diag "could not build $so with \"@cc\" (children the postmaster "
		  . "forks from signal handlers may run on the real clock): "
		  . ($@ || "$out$err");
	}
	return $faketime_shim;
}

# the environment that makes libfaketime fake the postmaster's clock; none
# where libfaketime is missing
sub _faketime_env
{
	my ($node) = @_;
	return () unless defined $libfaketime;

	my %env = (
		LD_PRELOAD =>
		  join(':', grep { defined } _faketime_shim(), $libfaketime),
		FAKETIME_TIMESTAMP_FILE      => $clock_file{ $node->name },
		FAKETIME_DONT_FAKE_MONOTONIC => '1');

	# pg_ctl start only accepts a postmaster.pid whose start time is not
	# older than its own, so with a clock set back it must see the same
	# clock as the postmaster.  A clock that runs slow starts at the real
	# time, and there faking pg_ctl would only stretch its waits.
	$env{FAKETIME_ONLY_CMDS} =
	  defined $clock_rate{ $node->name } ? 'postgres' : 'postgres,pg_ctl';
	if ($no_cache{ $node->name })
	{
		$env{FAKETIME_NO_CACHE} = '1';
	}
	else
	{
		$env{FAKETIME_CACHE_DURATION} = '1';
	}
	return %env;
}

=pod

=item start_node(node, %params)

=item restart_node(node)

$node->start / $node->restart with libfaketime preloaded into the
postmaster, where libfaketime is installed.  The first of them in a test
(or of faketime_env) first checks, as a test of its own, that libfaketime
fakes the clock of every process a postmaster forks; see
_check_children_faked.

=cut

sub start_node
{
	my ($node, %params) = @_;
	_check_children_faked();
	my %env = _faketime_env($node);
	local @ENV{ keys %env } = values %env;
	return $node->start(%params);
}

sub restart_node
{
	my ($node) = @_;
	_check_children_faked();
	my %env = _faketime_env($node);
	local @ENV{ keys %env } = values %env;
	return $node->restart;
}

=pod

=item faketime_env(node, %params)

The environment variables under which a server that another program
starts, such as Patroni, runs on the node's clock file: the node gets a
clock file first if it has none (C<offset>, C<rate> and C<no_cache> as for
snowflake_node), and set_clock moves it.  Empty where libfaketime is
missing.

=cut

sub faketime_env
{
	my ($node, %params) = @_;
	_check_children_faked();
	_setup_clock($node, %params) unless defined $clock_file{ $node->name };
	return _faketime_env($node);
}

# Once per test, where libfaketime is installed: a test that every process
# of a throwaway server started an hour behind (no snowflake loaded) has
# backend_start on that clock, in particular those the postmaster forks from
# its signal handlers, such as the autovacuum launcher and the logical
# replication launcher (a background worker, started as snowflake's are).
# With libfaketime's select() wrapper and a PostgreSQL 15 postmaster they ran
# on the real clock; see t/faketime_shim.c.
my $children_checked;

sub _check_children_faked
{
	return if $children_checked || !defined $libfaketime;
	$children_checked = 1;

	my $offset    = -3600;
	my $tolerance = 5;
	my @launchers = ('autovacuum launcher', 'logical replication launcher');
	my $probe     = PostgreSQL::Test::Cluster->new('faketime_probe');
	$probe->init;
	_setup_clock($probe, offset => $offset);
	my $started = time();
	start_node($probe);

	# (backend_type, backend_start in s since 1970) of each server process,
	# read until the launchers, started after recovery, show up
	my (@processes, @missing);
	my $deadline = time() + 10;
	while (1)
	{
		@processes = map { [ split /\|/ ] } split /\n/,
		  $probe->safe_psql(
			'postgres', q{
SELECT backend_type || '|' || extract(epoch FROM backend_start)
FROM pg_stat_activity
WHERE backend_type <> 'client backend'});
		my %seen = map { $_->[0] => 1 } @processes;
		@missing = grep { !$seen{$_} } @launchers;
		last if !@missing || time() > $deadline;
		usleep(100_000);
	}
	my $checked = time();
	$probe->teardown_node;

	my @wrong = map {
		sprintf('%s started %.1f s from the real time of the start',
			$_->[0], $_->[1] - $started)
	  } grep {
		$_->[1] < $started + $offset - $tolerance
		  || $_->[1] > $checked + $offset + $tolerance
	  } @processes;
	ok(!@missing && !@wrong,
		'every process of a postmaster under libfaketime, also those it '
		  . 'forks from signal handlers, runs on the faked clock')
	  or diag join("\n", "expected about $offset s:", @wrong,
		map { "no $_ in pg_stat_activity" } @missing);
	return;
}

=pod

=item server_clock_offset(node)

The server's clock minus the test's clock, in seconds, read with
clock_timestamp() in a new session (good to about the time a psql call
takes).

=cut

sub server_clock_offset
{
	my ($node) = @_;
	my $before = time();
	my $server = $node->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
	my $after = time();
	return $server - ($before + $after) / 2;
}

=pod

=item check_clock_offset(node, offset_seconds, test_name[, tolerance])

Passes once the server's clock is offset_seconds from the test's (within
tolerance, 1.5 s by default), waiting up to 10 s for libfaketime to reread
its file.  Fails if libfaketime does not move the clock.

=cut

sub check_clock_offset
{
	my ($node, $expected, $test_name, $tolerance) = @_;
	$tolerance //= 1.5;

	my $offset;
	my $deadline = time() + 10;
	while (1)
	{
		$offset = server_clock_offset($node);
		last if abs($offset - $expected) <= $tolerance || time() > $deadline;
		usleep(50_000);
	}
	ok(abs($offset - $expected) <= $tolerance, $test_name)
	  or diag sprintf("server clock is %.3f s off the test's, expected %.3f",
		$offset, $expected);
	return $offset;
}

=pod

=item check_clock_rate(node, rate, test_name)

Passes if the server's clock runs at about rate times the speed of the
test's clock, measured over two seconds.  Each reading is off by up to half
a psql call, which a loaded machine (or TAP files running in parallel)
stretches, so the bound is generous: it still tells a faked clock from a
real one.

=cut

sub check_clock_rate
{
	my ($node, $rate, $test_name) = @_;

	my $o1 = server_clock_offset($node);
	my $t1 = time();
	usleep(2_000_000);
	my $o2       = server_clock_offset($node);
	my $t2       = time();
	my $measured = 1 + ($o2 - $o1) / ($t2 - $t1);
	ok(abs($measured - $rate) < 0.2 + $rate / 2, $test_name)
	  or diag
	  sprintf("server clock runs at %.3f times real speed, expected %s",
		$measured, $rate);
	return $measured;
}

=pod

=item crash_node(node)

Crash the node the hard way: stop the postmaster (so that it forks nothing
more), SIGKILL every child of it and then the postmaster itself, and wait
until all of them are gone.  Nothing gets to run a shutdown hook.

Dead processes of the killed server are reparented to PID 1, which in a
container may leave them as zombies for a while; a zombie postmaster would
make the next start think the server still runs.  So once every process is
dead, the lock files naming the postmaster (postmaster.pid and the socket's
lock file) are removed, as the next start would do with them anyway had the
postmaster's PID been reaped.

=cut

sub crash_node
{
	my ($node) = @_;
	my $pm = $node->{_pid};
	die "node " . $node->name . " is not running" unless defined $pm;

	signal_process('STOP', $pm, 'the postmaster of ' . $node->name);
	my @children = _child_pids($pm);
	note "crashing node "
	  . $node->name
	  . ": postmaster $pm, children @children";
	signal_process('KILL', $_, 'a child of the postmaster') foreach @children;
	$node->kill9;    # SIGKILL to the postmaster; the node is known stopped

	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	foreach my $pid ($pm, @children)
	{
		while (_pid_alive($pid))
		{
			die "process $pid survived SIGKILL" if time() > $deadline;
			usleep(10_000);
		}
	}
	unlink($node->data_dir . '/postmaster.pid');
	unlink($node->host . '/.s.PGSQL.' . $node->port . '.lock')
	  if $PostgreSQL::Test::Utils::use_unix_sockets;
	return;
}

=pod

=item wait_for_connections(node)

Wait until the node accepts connections, after the postmaster reinitialised
for a backend's crash.  The node's own poll_query_until and psql hand psql
its query on stdin: a psql that exits at once on a connection refused during
the crash recovery can leave that write with a broken pipe, of which
IPC::Run dies.  pg_isready reads nothing.

=cut

sub wait_for_connections
{
	my ($node) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	my ($out, $err);
	until (
		IPC::Run::run(
			[
				'pg_isready', '-q', '-h', $node->host, '-p', $node->port,
				'-d', 'postgres'
			],
			'<', \undef, '>', \$out, '2>', \$err))
	{
		die "node " . $node->name . " did not accept connections in time"
		  if time() > $deadline;
		usleep(50_000);
	}
	return;
}

=pod

=item mark_writer_pid(node [, wait => 1])

The process id of the node's mark writer, or undef when none runs.  With
wait, it waits for one up to the default timeout first (a worker the
postmaster starts again after it exited, or one that has not yet set its
process title).

=item registry_worker_pid(node [, wait => 1])

The process id of the node's registry worker, or undef when none runs, with
the same wait.  Workers without a database connection do not appear in
pg_stat_activity.

=cut

sub mark_writer_pid
{
	my ($node, %opts) = @_;
	return _worker_pid($node, 'snowflake mark writer', $opts{wait});
}

sub registry_worker_pid
{
	my ($node, %opts) = @_;
	return _worker_pid($node, 'snowflake registry worker', $opts{wait});
}

# the child of the node's postmaster whose process title names the worker
sub _worker_pid
{
	my ($node, $title, $wait) = @_;
	my $deadline = time() + ($wait ? $PostgreSQL::Test::Utils::timeout_default : 0);
	while (1)
	{
		my $postmaster = $node->{_pid};
		if (defined $postmaster)
		{
			foreach my $pid (_child_pids($postmaster))
			{
				open my $cmd_fh, '<', "/proc/$pid/cmdline" or next;
				my $cmdline = <$cmd_fh> // '';
				close $cmd_fh;
				return $pid
				  if $cmdline =~ /^postgres: (?:[^:]+: )?\Q$title\E/;
			}
		}
		return undef if time() >= $deadline;
		usleep(50_000);
	}
}

=pod

=item signal_process(signal, pid, what)

Send the signal to the one process pid, and die, naming what, unless pid is
a process id.  Perl's kill takes an undefined or empty pid, or 0, for the
caller's process group, and a negative one for a whole group: a worker not
found, or a pid file read while it was written, would send the signal to
prove, make and every TAP file running beside (a whole run that ends
without its summary).  Returns kill's count of processes signalled.

=cut

sub signal_process
{
	my ($signal, $pid, $what) = @_;
	die "no process id of $what to send SIG$signal to"
	  unless defined $pid && $pid =~ /^[0-9]+$/ && $pid > 1;
	return kill $signal, $pid;
}

sub _child_pids
{
	my ($ppid) = @_;
	my @pids;
	opendir(my $dh, '/proc') or die "could not read /proc: $!";
	foreach my $pid (grep { /^\d+$/ } readdir $dh)
	{
		open my $fh, '<', "/proc/$pid/stat" or next;
		my $stat = <$fh>;
		close $fh;
		next unless defined $stat;
		# pid (comm) state ppid ...; comm may hold spaces and parentheses
		push @pids, $pid if $stat =~ /\) \S+ (\d+) / && $1 == $ppid;
	}
	closedir $dh;
	return @pids;
}

# alive and not a zombie
sub _pid_alive
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return 0;
	my $stat = <$fh>;
	close $fh;
	return 0 unless defined $stat;
	return $stat =~ /\) ([A-Za-z]) / && $1 ne 'Z' && $1 ne 'X';
}

=pod

=item assert_running(node)

Dies, with the end of the node's server log, unless the node's postmaster is
alive.  The test framework sets restart_after_crash = off, so a server
process that crashes stops the whole node, and what a test does next fails
with no word of why.

=cut

sub assert_running
{
	my ($node) = @_;
	my $pm = $node->{_pid};
	return if defined $pm && _pid_alive($pm);
	my @log = split /\n/, slurp_file($node->logfile);
	splice(@log, 0, @log - 40) if @log > 40;
	die "node "
	  . $node->name
	  . " stopped when the test did not stop it; the end of its log:\n"
	  . join("\n", @log) . "\n";
}

=pod

=item server_troubles(node)

The lines of the node's server log that tell of a server process that
crashed or exited abnormally, or of a PANIC.  crash_node kills the whole
node at once, which leaves no such line.

=cut

sub server_troubles
{
	my ($node) = @_;
	return grep {
		/terminated by signal|exited with exit code [2-9]|PANIC:|TRAP:/
	} split /\n/, slurp_file($node->logfile);
}

=pod

=item psql_timed(node, sql)

Run sql in one psql session with VERBOSITY verbose (so that errors show
their SQLSTATE) and ON_ERROR_STOP.  Returns the seconds it took, psql's exit
code, its stdout and its stderr.

=cut

sub psql_timed
{
	my ($node, $sql) = @_;
	my ($stdout, $stderr);
	my $start = time();
	my $ret   = $node->psql(
		'postgres', "\\set VERBOSITY verbose\n$sql",
		stdout => \$stdout,
		stderr => \$stderr);
	return (time() - $start, $ret, $stdout, $stderr);
}

=pod

=item start_waiter(node, application_name, stdout_ref, stderr_ref, statements...)

psql in the background: one session of the node, named application_name
(so that pg_stat_activity finds it), runs the statements in turn with
VERBOSITY verbose, its output going into the scalars referenced.  Returns
the IPC::Run harness; its finish() waits for psql, within the TAP timeout.

=item cancel_waiter(node, application_name)

pg_cancel_backend() to the node's sessions named application_name.

=cut

sub start_waiter
{
	my ($node, $application_name, $stdout, $stderr, @statements) = @_;
	($$stdout, $$stderr) = ('', '');
	return IPC::Run::start(
		[
			'psql', '-X', '-A', '-t',
			'-v' => 'VERBOSITY=verbose',
			'-d' => $node->connstr('postgres')
			  . " application_name=$application_name",
			map { ('-c' => $_) } @statements
		],
		'<', '/dev/null', '>', $stdout, '2>', $stderr,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
}

sub cancel_waiter
{
	my ($node, $application_name) = @_;
	$node->safe_psql('postgres',
		"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '$application_name'"
	);
	return;
}

=pod

=item wait_event_of(node, name)

What pg_stat_activity's wait_event shows on the node for snowflake's wait
called name (SnowflakeClock, SnowflakeMark or SnowflakeRegistryClaim): the
name itself from PostgreSQL 17 on, where extensions name their waits, and
"Extension" before.  The wait_event_type is "Extension" on every major.

=item wait_for_wait_event(node, condition, name)

Polls pg_stat_activity until exactly one session that meets the SQL
condition waits in snowflake's wait called name (as wait_event_of shows
it).  True when one did within the TAP timeout.

=cut

sub wait_event_of
{
	my ($node, $name) = @_;
	die "wait_event_of: \"$name\" is not one of snowflake's waits"
	  unless $name =~ /^Snowflake(?:Clock|Mark|RegistryClaim)$/;
	return $node->pg_version >= 17 ? $name : 'Extension';
}

sub wait_for_wait_event
{
	my ($node, $condition, $name) = @_;
	my $event = wait_event_of($node, $name);
	return $node->poll_query_until(
		'postgres', qq{
SELECT count(*) = 1 FROM pg_stat_activity
WHERE ($condition)
	AND wait_event_type = 'Extension' AND wait_event = '$event'});
}

=pod

=item alter_system(node, name => value, ...)

ALTER SYSTEM SET each setting to its value (ALTER SYSTEM RESET where the
value is undef), in that order, then reload the configuration and wait until
new sessions run under it: until pg_conf_load_time() has changed.  (Not
until it has passed the load before: the node's clock may have been set back
since.)  Dies if it does not within the TAP timeout.  Values are quoted as
string literals, which every type of setting accepts.

=cut

sub alter_system
{
	my ($node, @settings) = @_;
	my $sql = '';
	while (my ($name, $value) = splice(@settings, 0, 2))
	{
		die "alter_system: \"$name\" is not a setting name"
		  unless $name =~ /^[A-Za-z_][A-Za-z0-9_.]*$/;
		if (defined $value)
		{
			$value =~ s/'/''/g;
			$sql .= "ALTER SYSTEM SET $name = '$value';\n";
		}
		else
		{
			$sql .= "ALTER SYSTEM RESET $name;\n";
		}
	}
	assert_running($node);
	my $loaded = $node->safe_psql('postgres',
		"${sql}SELECT pg_conf_load_time();\nSELECT pg_reload_conf();");
	($loaded) = split /\n/, $loaded;
	unless (
		$node->poll_query_until(
			'postgres', "SELECT pg_conf_load_time() <> '$loaded'::timestamptz"
		))
	{
		assert_running($node);
		die "the configuration of node " . $node->name . " was not reloaded";
	}
	note "on node " . $node->name . ": " . ($sql =~ s/\n/ /gr) . 'reloaded';
	return;
}

=pod

=item check_strictly_increasing(node, table, test_name, %params)

Passes if every id in table is greater than the one before it, in the order
of C<order_by> (default C<n>), within each group of C<partition_by> (default:
the whole table).  C<id> names another column to check.  Returns the number
of ids that are not (0 when it passes).

=cut

sub check_strictly_increasing
{
	my ($node, $table, $test_name, %params) = @_;
	my $id       = $params{id}       // 'id';
	my $order_by = $params{order_by} // 'n';
	my $window =
	  defined $params{partition_by}
	  ? "PARTITION BY $params{partition_by} ORDER BY $order_by"
	  : "ORDER BY $order_by";
	my $not_increasing = $node->safe_psql(
		'postgres', qq{
SELECT count(*) FROM (
	SELECT $id AS id, lag($id) OVER ($window) AS prev FROM $table) s
WHERE id <= prev});
	is($not_increasing, '0', $test_name)
	  or diag "$not_increasing ids of $table are not greater than the one "
	  . "before them ($window)";
	return $not_increasing;
}

=pod

=item id_ms(id)

=item id_unix_ms(id)

The millisecond an ID carries, counted from snowflake's default epoch or
from 1970.

=cut

sub id_ms
{
	my ($id) = @_;
	return $id >> 22;
}

sub id_unix_ms
{
	my ($id) = @_;
	return ($id >> 22) + SNOWFLAKE_EPOCH_UNIX_MS;
}

=pod

=item read_mark_file(path)

The fields of a mark file: size, magic, version, epoch_unix_ms, mark_ms,
written_at_ms and the four widths of the layout (version 2 on), crc and
crc_ok.

=item mark_file_fields(bytes)

The same fields, of a mark file's bytes read before: of the very bytes, as
the mark writer may replace the file between two reads.

=cut

sub read_mark_file
{
	my ($path) = @_;
	return mark_file_fields(slurp_file($path));
}

sub mark_file_fields
{
	my ($bytes) = @_;
	my %mark = (size => length($bytes));
	return \%mark if length($bytes) < 32;
	@mark{qw(magic version)} = unpack('L L', $bytes);
	if ($mark{version} == 1)
	{
		@mark{qw(epoch_unix_ms mark_ms crc)} = unpack('x8 q q L', $bytes);
		$mark{crc_ok} = crc32c(substr($bytes, 0, 24)) == $mark{crc};
	}
	elsif (length($bytes) >= 40)
	{
		@mark{
			qw(epoch_unix_ms mark_ms written_at_ms time_bits datacenter_bits worker_bits sequence_bits crc)
		} = unpack('x8 q q q C C C C L', $bytes);
		$mark{crc_ok} = crc32c(substr($bytes, 0, 36)) == $mark{crc};
	}
	return \%mark;
}

=pod

=item mark_file_bytes(%fields)

The bytes of a mark file as the server writes it: magic, version,
epoch_unix_ms, mark_ms, written_at_ms, layout (a list of the four widths,
time first; all defaulting to a valid mark of Twitter's layout written now)
and a CRC-32C of what precedes it, unless crc is given.  With version 1,
the 32 bytes of snowflake 1.0's file, which has no written_at_ms.

=item write_mark_file(path, bytes)

=cut

sub mark_file_bytes
{
	my (%f) = @_;
	my $version = $f{version} // MARK_VERSION;
	my $head = pack('L L q q',
		$f{magic}         // MARK_MAGIC,
		$version,
		$f{epoch_unix_ms} // SNOWFLAKE_EPOCH_UNIX_MS,
		$f{mark_ms}       // 0);
	return $head . pack('L x4', $f{crc} // crc32c($head)) if $version == 1;
	$head .= pack('q C C C C',
		$f{written_at_ms} // int(time() * 1000) - SNOWFLAKE_EPOCH_UNIX_MS,
		@{ $f{layout} // [ 41, 5, 5, 12 ] });
	return $head . pack('L', $f{crc} // crc32c($head));
}

sub write_mark_file
{
	my ($path, $bytes) = @_;
	open my $fh, '>:raw', $path or die "could not write $path: $!";
	print $fh $bytes;
	close $fh or die "could not write $path: $!";
	return;
}

=pod

=item crc32c(bytes)

CRC-32C (Castagnoli), as PostgreSQL's pg_crc32c computes it.

=cut

my @crc32c_table = map {
	my $c = $_;
	$c = ($c & 1) ? (($c >> 1) ^ 0x82F63B78) : ($c >> 1) for 1 .. 8;
	$c;
} 0 .. 255;

sub crc32c
{
	my ($bytes) = @_;
	my $crc = 0xFFFFFFFF;
	$crc = $crc32c_table[ ($crc ^ $_) & 0xFF ] ^ ($crc >> 8)
	  for unpack('C*', $bytes);
	return $crc ^ 0xFFFFFFFF;
}

=pod

=back

=cut

1;
