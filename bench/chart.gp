# bench/chart.gp: total IDs/s against sessions, one line a contender, from
# the blocks bench/summary.awk writes.  gnuplot -e "data='bulk.dat';
# png='bulk.png'; major='18'" bench/chart.gp (bench/run.sh does this); the
# title names the PostgreSQL major when major is given.
set terminal pngcairo noenhanced size 1000,640
set output png
set key below maxrows 3 width 2
set logscale xy; set xrange [0.8:10]; set xtics (1, 2, 8)
set xlabel 'sessions at once'; set ylabel 'IDs per second, all sessions (log)'
set format y '%.1s%c'; set grid
if (exists('major')) set title 'PostgreSQL '.major
plot 4096000 title 'ceiling: 4096 IDs/ms per server' dashtype 2, \
	for [i = 0:*] data index i using 1:2 with linespoints title columnheader(1)
