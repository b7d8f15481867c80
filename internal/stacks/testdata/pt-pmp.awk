# pt-pmp's aggregation (Percona Toolkit), for gdb's "thread apply all bt"
# and eu-stack's output: one line per thread, its function names from the
# innermost frame out, comma-joined. gdb: a frame with an address names its
# function after "in" ($4), one without in $2. eu-stack: the function
# follows the address ($3 on), or is unknown ("??"); its argument list and
# symbol version (@GLIBC_2.2.5) are dropped. The expected files are this
# script's output piped through `sort | uniq -c | sort -k1,1nr -k2`.
function flush() { if (s != "") print s; s = "" }
function add(f) { sub(/\(.*/, "", f); sub(/@.*/, "", f); if (f == "") f = "??"; s = (s == "") ? f : s "," f }
BEGIN { s = "" }
$1 == "Thread" || $1 == "TID" { flush() }
$1 ~ /^#/ {
  if (FILENAME ~ /gdb/) { add($2 ~ /^0x/ ? $4 : $2) }
  else { f = ""; for (i = 3; i <= NF; i++) f = f (i > 3 ? " " : "") $i; add(f) }
}
END { flush() }
