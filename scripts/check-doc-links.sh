#!/usr/bin/env bash
# check-doc-links.sh [FILE.md …]: every relative Markdown link and image in
# the docs points at a file that exists, and every #anchor at a heading of
# the file it names (GitHub's anchors: lower case, punctuation dropped,
# spaces as hyphens, repeats numbered -1, -2, …). Links to other sites are
# not followed. Without arguments it checks README.md, BENCHMARKS.md,
# bench/README.md and docs/*.md. Exit 1 and one line per broken link when
# any is broken.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
	shopt -s nullglob
	set -- README.md BENCHMARKS.md bench/README.md docs/*.md
fi
exec perl -CSDA -Mutf8 -e '
use strict; use warnings;
use File::Basename qw(dirname);
use File::Spec;

my %anchors;   # file → { anchor → 1 }
sub anchors {
	my ($file) = @_;
	return $anchors{$file} if $anchors{$file};
	my %seen; my %set;
	open(my $fh, "<:encoding(UTF-8)", $file) or return $anchors{$file} = {};
	my $fence = "";
	while (my $l = <$fh>) {
		if ($l =~ /^\s*(```|~~~)/) { $fence = $fence ? "" : $1; next }
		next if $fence;
		next unless $l =~ /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
		my $t = $1;
		$t =~ s/!?\[([^\]]*)\]\([^)]*\)/$1/g;   # links and images: their text
		$t =~ s/<[^>]+>//g;                     # inline HTML
		$t = lc $t;
		$t =~ s/[^\p{L}\p{N}_ \-]//g;
		$t =~ s/ /-/g;
		my $a = $t;
		$a = $t . "-" . $seen{$t} if $seen{$t};
		$seen{$t}++;
		$set{$a} = 1;
	}
	return $anchors{$file} = \%set;
}

my $bad = 0;
for my $file (@ARGV) {
	open(my $fh, "<:encoding(UTF-8)", $file) or do { print "$file: cannot read\n"; $bad++; next };
	my $fence = ""; my $n = 0;
	while (my $l = <$fh>) {
		$n++;
		if ($l =~ /^\s*(```|~~~)/) { $fence = $fence ? "" : $1; next }
		next if $fence;
		$l =~ s/(`+).*?\1//g;                   # code spans hold no links
		while ($l =~ /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g) {
			my $target = $1;
			next if $target =~ /^[a-zA-Z][a-zA-Z0-9+.-]*:/;   # http:, https:, mailto:
			my ($path, $anchor) = split /#/, $target, 2;
			my $dest = $path eq "" ? $file : File::Spec->catfile(dirname($file), $path);
			$dest = File::Spec->canonpath($dest);
			if ($path ne "" && !-e $dest) {
				print "$file:$n: $target: no such file ($dest)\n"; $bad++; next;
			}
			next unless defined $anchor && $anchor ne "";
			if ($dest !~ /\.md$/i) {
				print "$file:$n: $target: an anchor into a file that is not Markdown\n"; $bad++; next;
			}
			if (!anchors($dest)->{$anchor}) {
				print "$file:$n: $target: no heading #$anchor in $dest\n"; $bad++;
			}
		}
	}
}
if ($bad) { print "$bad broken link(s)\n"; exit 1 }
print "doc links: all relative links and anchors resolve (", scalar(@ARGV), " files)\n";
' "$@"
