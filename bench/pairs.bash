# Shared by the bench scripts that pair rounds: source it (not a .sh, so that make bench, which runs bench/*.sh, leaves it out).
# median: the median of the numbers on stdin (0 for none).
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print 0; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# pairs FILE_A FILE_B: the per-round ratios a/b, one a line.
pairs() { paste "$1" "$2" | awk '$2 > 0 {print $1 / $2}'; }
# cputime FILE: user + system seconds from GNU time -f '%U %S'.
cputime() { awk '{print $1 + $2}' "$1"; }
