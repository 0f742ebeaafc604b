# Copyright (c) 2026, the snowflake authors
#
# No two files of src/ depend on each other in a cycle.  A file x.c and its
# own header x.h are one module, x; a module depends on each other module
# whose header one of its files includes with #include "...".  Headers that
# are not in src/ (PostgreSQL's, libpq's) are not modules.  The test fails
# on any cycle between modules, and names it.  No server is needed.
use strict;
use warnings;

use File::Basename qw(basename);
use FindBin;
use Test::More;

my $top = "$FindBin::RealBin/..";
my @files = sort(glob("$top/src/*.c"), glob("$top/src/*.h"));
my %is_module = map { (basename($_) =~ s/\.[ch]$//r) => 1 } @files;

# module => { module it depends on => "file:line" that says so }
my %deps;
foreach my $file (@files)
{
	my $name = basename($file);
	my $module = $name =~ s/\.[ch]$//r;
	$deps{$module} //= {};
	open my $fh, '<', $file or die "could not read $file: $!";
	while (my $line = <$fh>)
	{
		next unless $line =~ /^\s*#\s*include\s+"([^"]+)\.h"/;
		my $included = $1;
		next if $included eq $module || !$is_module{$included};
		$deps{$module}{$included} //= "$name:$.";
	}
	close $fh;
}

ok(scalar(keys %deps) > 10, 'src/ holds modules (' . scalar(keys %deps) . ')');
ok((grep { %$_ } values %deps), 'some module includes another');

# depth-first search; an edge back to a module on the path closes a cycle
my (%state, @path, @cycles);
sub visit
{
	my ($module) = @_;
	$state{$module} = 'open';
	push @path, $module;
	foreach my $next (sort keys %{ $deps{$module} })
	{
		if (($state{$next} // '') eq 'open')
		{
			my ($at) = grep { $path[$_] eq $next } 0 .. $#path;
			my @cycle = (@path[ $at .. $#path ], $next);
			push @cycles,
			  join(' -> ',
				map { "$cycle[$_] ($deps{$cycle[$_]}{$cycle[$_ + 1]})" }
				  0 .. $#cycle - 1)
			  . " -> $next";
		}
		elsif (!$state{$next})
		{
			visit($next);
		}
	}
	pop @path;
	$state{$module} = 'done';
}
visit($_) foreach grep { !$state{$_} } sort keys %deps;

ok(!@cycles, 'no cycle between the modules of src/')
  or diag(join("\n", 'cycles:', @cycles));

done_testing();
