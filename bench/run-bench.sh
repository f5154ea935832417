#!/bin/sh
# The epmpi benchmark driver (`make bench`): runs epmpi-bench in pairs of
# configurations, epmpi against a baseline, alternating the two REPS times in
# one run (the order flips every repetition), and reports the medians and the
# ratio epmpi / baseline of every measurement: a table on the terminal (also
# Markdown), a CSV file and PNG plots (gnuplot, installed when missing and
# running as root).
#
# Configurations (epmpi against baseline):
#   1   1 process x 2 endpoints (world mode)  vs  2 MPICH processes
#       pingpong, rate, calls, rma, create
#   2   2 processes x 1 endpoint (world mode) vs  2 MPICH processes
#       pingpong, rate, rma
#   3   2 processes, epmpi preloaded, no world mode vs 2 MPICH processes
#       pingpong, rate
#   4   2 processes x 2 endpoints vs 2 MPICH processes x 2 threads
#       (MPI_THREAD_MULTIPLE, each thread on its own MPI_Comm_dup): rate
#   5a  1 process x 2 endpoints vs 2 MPICH processes: coll, io
#   5b  2 processes x 2 endpoints vs 4 MPICH processes: coll, io
#   7   1 process x 2 threads of a thread communicator (MPIX_Threadcomm_*):
#       epmpi's (preloaded) vs MPICH's own, the same program: pingpong
#       (8 B, 1 MiB), rate (8 B), coll
#   8   the same with 2 processes x 2 threads
#   (7 and 8 only where MPICH has thread communicators: 4.2 and later)
# and once per repetition the machine's limits inside a process: memcpy
# bandwidth (one thread, and two threads copying a half each), the one-way handoff time between two threads and
# their streaming rate through a ring of 64-byte slots; and between two
# processes the shared-memory floor (epmpi-bench --case shm) and the UCX
# floor (--case ucx) when the program has UCX.
#
# Environment (make bench sets them): BENCH_PROG (epmpi-bench), BENCH_LIB
# (libepmpi.so), BENCH_MPIEXEC, BENCH_MPI_KIND (mpich: hydra's mpiexec;
# openmpi: Open MPI's mpirun, the baseline then Open MPI's processes),
# BENCH_SAN_PRELOAD (a sanitizer runtime to preload first), BENCH_REPS, BENCH_CONFIGS, BENCH_OUT, BENCH_PROG_ARGS
# (extra epmpi-bench options for every run, e.g. "--time 10"), BENCH_HOSTS
# (mpiexec -hosts for every run, e.g. "node1,node2": processes dealt to
# the hosts in turn; make bench HOSTS=...).
set -eu

usage() {
    cat <<USAGE
usage: run-bench.sh [--reps N] [--configs "1 2 3 4 5 6"] [--out DIR] [--no-plots] [--plots-only] [--smoke]
  --reps N      alternations of each pair of runs (default 7)
  --configs L   which configurations (1 2 3 4 5 6 7 8, or 5a 5b; default all)
  --out DIR     where latest.csv, table.md and the plots go (default bench/results)
  --no-plots    no PNG plots
  --plots-only  measure nothing: draw the plots again from DIR/latest.csv
  --smoke       tiny cases (configuration 1, pingpong and rma at 8 B, 10
                iterations), to check that the program and this driver work;
                without --out, the results go to a new temporary directory
                (bench/results keeps the committed ones)
USAGE
}

REPS=${BENCH_REPS:-7}
CONFIGS=${BENCH_CONFIGS:-1 2 3 4 5 6 7 8}
OUT=${BENCH_OUT:-}
PROG=${BENCH_PROG:-$(pwd)/epmpi-bench}
LIB=${BENCH_LIB:-$(pwd)/.libs/libepmpi.so}
MPIEXEC=${BENCH_MPIEXEC:-mpiexec}
MPI_KIND=${BENCH_MPI_KIND:-mpich}
# shellcheck source=bench/mpi-launch.sh
. "$(dirname "$0")/mpi-launch.sh"
if [ "$MPI_KIND" = openmpi ]; then MPI_NAME="Open MPI"; else MPI_NAME=MPICH; fi
PROG_ARGS=${BENCH_PROG_ARGS:-}
TIMEOUT=${BENCH_TIMEOUT:-300}
PLOTS=1
REPLOT=0
SMOKE=0
[ -n "$REPS" ] || REPS=7
[ -n "$CONFIGS" ] || CONFIGS="1 2 3 4 5 6 7 8"

while [ $# -gt 0 ]; do
    case $1 in
        --reps) REPS=$2; shift 2 ;;
        --configs) CONFIGS=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --no-plots) PLOTS=0; shift ;;
        --plots-only) REPLOT=1; shift ;;
        --smoke) SMOKE=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "run-bench.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
case $REPS in
    ''|*[!0-9]*|0) echo "run-bench.sh: --reps needs a positive number, not '$REPS'" >&2; exit 2 ;;
esac
if [ -z "$OUT" ] && [ "$SMOKE" = 1 ]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/epmpi-bench-smoke.XXXXXX")
    echo "== smoke run: results in $OUT"
fi
[ -n "$OUT" ] || OUT=bench/results
if [ "$SMOKE" = 1 ]; then
    REPS=1 CONFIGS=1 PLOTS=0 PROG_ARGS="--sizes 8 --iters 10 --batches 1"
fi
for f in "$PROG" "$LIB"; do
    [ -e "$f" ] || { echo "run-bench.sh: $f not found (run make first, or set BENCH_PROG / BENCH_LIB)" >&2; exit 2; }
done

# Nothing from the caller's environment may turn a baseline into an epmpi run.
unset LD_PRELOAD EPMPI_ENDPOINTS OMP_NUM_THREADS
PRELOAD=$LIB
if [ -n "${BENCH_SAN_PRELOAD:-}" ]; then
    PRELOAD=$BENCH_SAN_PRELOAD:$LIB # a sanitizer runtime must come first
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
fi

# id, epmpi shape, baseline shape, cases (a case@SIZES runs those sizes,
# separated by +), and epmpi-bench options for both sides (optional).
# Configurations 7 and 8 time a fixed number of iterations: MPICH 4.2.1's
# own thread communicators hang after some thousands of back-to-back
# collectives (seen with a barrier then a broadcast), which calibration
# reaches.
CONFIG_TABLE='1 world:1:2 mpich:2 pingpong,rate,calls,rma,create
2 world:2:1 mpich:2 pingpong,rate,rma
3 preload:2 mpich:2 pingpong,rate
4 world:2:2 mt:2:2 rate
5a world:1:2 mpich:2 coll,io
5b world:2:2 mpich:4 coll,io
6 engine:2:1 mpich:2 pingpong,rate@8+4096
7 tc:1:2 mpichtc:1:2 pingpong@8+1048576,rate@8,coll --iters=200
8 tc:2:2 mpichtc:2:2 pingpong@8+1048576,rate@8,coll --iters=200'
[ "$SMOKE" = 1 ] && CONFIG_TABLE='1 world:1:2 mpich:2 pingpong,rma'

describe() {
    case $1 in
        world:1:*) echo "epmpi: 1 process x ${1##*:} endpoints" ;;
        world:*) p=${1#world:}; echo "epmpi: ${p%%:*} processes x ${1##*:} endpoint(s)" ;;
        engine:*) p=${1#engine:}; echo "epmpi: ${p%%:*} processes x ${1##*:} endpoint(s) with the endpoint transport forced (EPMPI_P2P_PATH=engine)" ;;
        preload:*) echo "epmpi preloaded without world mode: ${1#preload:} processes" ;;
        mpich:*) echo "$MPI_NAME: ${1#mpich:} processes" ;;
        mt:*) p=${1#mt:}; echo "$MPI_NAME: ${p%%:*} processes x ${1##*:} threads (THREAD_MULTIPLE; a dup per thread)" ;;
        tc:*) p=${1#tc:}; echo "epmpi's thread communicator: ${p%%:*} process(es) x ${1##*:} threads" ;;
        mpichtc:*) p=${1#mpichtc:}; echo "MPICH's own thread communicator: ${p%%:*} process(es) x ${1##*:} threads" ;;
    esac
}

# launch SHAPE ARGS...: one run of the program in SHAPE.
launch() {
    shape=$1; shift
    case $shape in
        mpich:*) set -- -n "${shape#mpich:}" -genv OMP_NUM_THREADS 1 "$PROG" "$@" ;;
        mt:*) p=${shape#mt:}
              set -- -n "${p%%:*}" -genv OMP_NUM_THREADS "${shape##*:}" "$PROG" --comm dup "$@" ;;
        preload:*) set -- -n "${shape#preload:}" -genv OMP_NUM_THREADS 1 -genv LD_PRELOAD "$PRELOAD" "$PROG" "$@" ;;
        tc:*) p=${shape#tc:}
              set -- -n "${p%%:*}" -genv OMP_NUM_THREADS "${shape##*:}" -genv LD_PRELOAD "$PRELOAD" "$PROG" \
                  --comm threadcomm "$@" ;;
        mpichtc:*) p=${shape#mpichtc:}
              set -- -n "${p%%:*}" -genv OMP_NUM_THREADS "${shape##*:}" "$PROG" --comm threadcomm "$@" ;;
        world:*|engine:*) p=${shape#*:}; t=${shape##*:}; path=auto
                 [ "${shape%%:*}" = world ] || path=engine
                 set -- -n "${p%%:*}" -genv OMP_NUM_THREADS "$t" -genv EPMPI_ENDPOINTS "$t" \
                     -genv EPMPI_P2P_PATH "$path" -genv LD_PRELOAD "$PRELOAD" "$PROG" "$@" ;;
    esac
    # the hosts: hydra's -hosts, mpirun's --host
    if [ -n "${BENCH_HOSTS:-}" ] && [ "$MPI_KIND" = openmpi ]; then
        set -- --host "$BENCH_HOSTS" "$@"
    elif [ -n "${BENCH_HOSTS:-}" ]; then
        set -- -hosts "$BENCH_HOSTS" "$@"
    fi
    # shellcheck disable=SC2086 # PROG_ARGS is a list of options
    # stdin from /dev/null: mpiexec forwards it to rank 0, and the loop
    # below reads its configurations from stdin
    mpi_launch "$TIMEOUT" "$@" $PROG_ARGS < /dev/null
}

# Configurations 7 and 8 need MPICH's own thread communicators (4.2 and
# later): the MPI library the program is linked with must export them.
mpich_lib=$(ldd "$PROG" 2>/dev/null | awk '/libmpi(ch)?\.so/ { print $3; exit }')
if [ -z "$mpich_lib" ] || ! nm -D --defined-only "$mpich_lib" 2>/dev/null | grep -q ' MPIX_Threadcomm_init$'; then
    case " $CONFIGS " in
        *" 7 "*|*" 8 "*) echo "== configurations 7 and 8 skipped: this MPICH has no thread communicators of its own" ;;
    esac
    CONFIG_TABLE=$(echo "$CONFIG_TABLE" | grep -v '^[78] ')
fi

# The selected configurations: "5" selects 5a and 5b.
selected=$(echo "$CONFIG_TABLE" | while read -r id rest; do
    for c in $CONFIGS; do
        case $id in "$c"|"$c"[a-z]) echo "$id $rest"; break ;; esac
    done
done)
[ -n "$selected" ] || { echo "run-bench.sh: no configuration matches '$CONFIGS'" >&2; exit 2; }

# ---- gnuplot first: installing it must not disturb the measurements ---------
plots_possible() {
    command -v gnuplot >/dev/null 2>&1 && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "== installing gnuplot-nox for the plots"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq gnuplot-nox >/dev/null 2>&1 ||
            { apt-get update -qq && apt-get install -y -qq gnuplot-nox >/dev/null; } || true
    fi
    command -v gnuplot >/dev/null 2>&1 && return 0
    echo "== gnuplot is missing (apt-get install gnuplot-nox): no plots"
    return 1
}
[ "$PLOTS" = 0 ] || plots_possible || PLOTS=0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$OUT"
: > "$tmp/samples"

# ---- plots, from the CSV ------------------------------------------------------------
# series FILE CONFIG SIDE CASE METRIC: "size median" lines from the CSV.
series() {
    awk -F, -v c="$2" -v side="$3" -v cs="$4" -v m="$5" \
        'NR > 1 && $1 == c && $4 == cs && $5 == m { print $6, (side == "baseline" ? $9 : $10) }' "$OUT/latest.csv" > "$tmp/$1"
}
# draw OUTPUT TITLE XLABEL YLABEL KEY: a log-log plot of $lines.
draw() {
    [ -n "$lines" ] || return 0
    gnuplot <<GNUPLOT
set terminal pngcairo size 900,560 font ",10"
set output '$OUT/$1'
set title "$2 (medians of $REPS alternating runs)"
set logscale xy
set format y "%g"
set xrange [6:24000000]
set xtics ("8" 8, "64" 64, "512" 512, "4K" 4096, "32K" 32768, "256K" 262144, "2M" 2097152, "16M" 16777216)
set xlabel "$3"
set ylabel "$4"
set grid
set key $5
plot $lines
GNUPLOT
    echo "== wrote $OUT/$1"
}
# add FILE TITLE STYLE: one more line for gnuplot, if FILE has points.
add() { if [ -s "$tmp/$1" ]; then lines="$lines${lines:+, }'$tmp/$1' using 1:2 with linespoints $3 title '$2'"; fi; }
# plot OUTPUT METRIC YLABEL TITLE KEY: the ping-pong series that were measured.
plot() {
    lines=""
    series mpich 1 baseline pingpong "$2"; add mpich "$MPI_NAME, 2 processes" "lw 2 pt 7"
    title=$4
    [ -s "$tmp/mpich" ] || title="$title (no $MPI_NAME curve: configuration 1 was not run)"
    series ep12 1 epmpi pingpong "$2"; add ep12 "epmpi, 1 process x 2 endpoints" "lw 2 pt 5"
    series ep21 2 epmpi pingpong "$2"; add ep21 "epmpi, 2 processes x 1 endpoint" "lw 2 pt 9"
    series pre 3 epmpi pingpong "$2"; add pre "epmpi preloaded, 2 processes (no world mode)" "lw 1 dt 3 pt 1"
    if [ "$2" = bandwidth ]; then
        series memcpy memcpy baseline memcpy bandwidth; add memcpy "memcpy, one thread" "lw 1 dt 2 pt 0 lc rgb 'gray40'"
        series memcpy2 memcpy baseline memcpy halves; add memcpy2 "memcpy, two threads a half each (the limit inside a process)" "lw 1 dt 4 pt 0 lc rgb 'gray20'"
    fi
    draw "$1" "$title" "message size (bytes)" "$3" "$5"
}
# plot_rma: Put and Get bandwidth (configurations 1 and 2; the baseline of 1).
plot_rma() {
    lines=""
    for op in put get; do
        dash=$([ $op = put ] && echo "" || echo " dt 2")
        series "m$op" 1 baseline "rma_$op" bandwidth; add "m$op" "$MPI_NAME, 2 processes: $op" "lw 2 pt 7$dash"
        series "e12$op" 1 epmpi "rma_$op" bandwidth; add "e12$op" "epmpi, 1 process x 2 endpoints: $op" "lw 2 pt 5$dash"
        series "e21$op" 2 epmpi "rma_$op" bandwidth; add "e21$op" "epmpi, 2 processes x 1 endpoint: $op" "lw 2 pt 9$dash"
    done
    title="One-sided Put and Get, each with a flush: bandwidth, epmpi vs $MPI_NAME"
    [ -s "$tmp/mput" ] || [ -s "$tmp/mget" ] || title="$title (no $MPI_NAME curve: configuration 1 was not run)"
    draw rma.png "$title" "size (bytes)" \
        "bandwidth (GB/s), higher is better" "bottom right"
}
draw_plots() {
    plot latency.png latency "one-way latency (us), lower is better" "Ping-pong latency, epmpi vs $MPI_NAME" "top left"
    plot bandwidth.png bandwidth "bandwidth (GB/s), higher is better" "Ping-pong bandwidth, epmpi vs $MPI_NAME" "bottom right"
    plot_rma
}
if [ "$REPLOT" = 1 ]; then
    [ -s "$OUT/latest.csv" ] || { echo "run-bench.sh: no $OUT/latest.csv to plot" >&2; exit 2; }
    [ "$PLOTS" = 1 ] || exit 1
    REPS=$(awk -F, 'NR > 1 && $14 + 0 > n { n = $14 + 0 } END { print n }' "$OUT/latest.csv")
    draw_plots
    exit 0
fi

# run CONFIG SIDE SHAPE CASE: one run, its results appended to the samples as
# "config side case metric size value unit"; anything else stops the driver.
run() {
    sizes=""
    case $4 in
        *@*) sizes=$(echo "${4#*@}" | tr '+' ',') ;;
    esac
    # shellcheck disable=SC2086 # $5: the configuration's options
    launch "$3" --case "${4%%@*}" ${sizes:+--sizes "$sizes"} ${5:-} > "$tmp/out" 2> "$tmp/err"
    code=$?
    if [ $code -ne 0 ]; then
        echo "run-bench.sh: this run failed with exit $code ($(describe "$3"), --case $4):" >&2
        cat "$tmp/out" "$tmp/err" >&2
        exit 1
    fi
    [ -s "$tmp/header" ] || grep '^# epmpi-bench' "$tmp/out" | head -1 > "$tmp/header" || true
    awk -v c="$1" -v s="$2" '
        /^#/ { next }
        NF == 5 && $3 ~ /^[0-9]+$/ && $4 ~ /^[0-9.e+-]+$/ { print c, s, $0; n++; next }
        { bad = 1; print "run-bench.sh: unexpected output line: " $0 > "/dev/stderr" }
        END { if (bad || !n) { if (!n) print "run-bench.sh: no results" > "/dev/stderr"; exit 1 } }
    ' "$tmp/out" >> "$tmp/samples" || { cat "$tmp/out" "$tmp/err" >&2; exit 1; }
}

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

# The floors between two processes, not in a smoke run: shared memory
# (epmpi-bench --case shm) when the two share a node, and UCX (--case ucx)
# when the program was built with it.
FLOORS2=""
if [ "$SMOKE" = 0 ]; then
    for floor in shm ucx; do
        if launch mpich:2 --case "$floor" --sizes 8 --iters 2 --batches 1 > /dev/null 2>&1; then
            FLOORS2="${FLOORS2:+$FLOORS2,}$floor"
        fi
    done
fi

ncases=$(echo "$selected" | awk '{ n += split($4, c, ",") } END { print n }')
total=$((REPS * (ncases + 1)))
started=$(now)
uptime_before=$(uptime | sed 's/.*load average: *//')
echo "== epmpi-bench: $REPS alternating repetitions, configurations: $(echo "$selected" | awk '{ printf "%s ", $1 }')"
echo "$selected" | while read -r id ep base cases; do
    printf '   %-3s %s  vs  %s: %s\n' "$id" "$(describe "$ep")" "$(describe "$base")" "$cases"
done
step=0
rep=1
while [ "$rep" -le "$REPS" ]; do
    step=$((step + 1))
    t0=$(now)
    run memcpy baseline mpich:1 memcpy,handoff
    [ -z "$FLOORS2" ] || run memcpy baseline mpich:2 "$FLOORS2"
    printf '[%3d/%d] rep %d/%d  memcpy bandwidth, thread handoff, floors between processes  %ss\n' "$step" "$total" "$rep" "$REPS" "$(secs "$t0" "$(now)")"
    # a here-document, not a pipe: run must be able to stop the driver
    while read -r id ep base cases opts; do
        for case in $(echo "$cases" | tr ',' ' '); do
            step=$((step + 1))
            t0=$(now)
            if [ $((rep % 2)) = 1 ]; then
                run "$id" baseline "$base" "$case" "$opts"
                run "$id" epmpi "$ep" "$case" "$opts"
            else
                run "$id" epmpi "$ep" "$case" "$opts"
                run "$id" baseline "$base" "$case" "$opts"
            fi
            printf '[%3d/%d] rep %d/%d  config %-3s %-9s %ss\n' "$step" "$total" "$rep" "$REPS" "$id" "$case" "$(secs "$t0" "$(now)")"
        done
    done <<EOF
$selected
EOF
    rep=$((rep + 1))
done
elapsed=$(secs "$started" "$(now)")
uptime_after=$(uptime | sed 's/.*load average: *//')

# ---- medians, ratios, targets -------------------------------------------------
# The targets of issues 6 and 25, on the ratio epmpi / baseline.
echo "$selected" | while read -r id ep base cases; do
    echo "desc $id $(describe "$ep")|$(describe "$base")"
done > "$tmp/desc"
awk -v reps="$REPS" '
function median(list,    v, n, i, j, x) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) { x = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
    lo = v[1]; hi = v[n]; count = n
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function target(c, cs, m, s) {
    if (cs ~ /^rma_/) return "" # issue 5 asks for the ratios only
    if (c == "1" && m == "latency" && s == 8) return "<= 0.5"
    if (c == "1" && m == "bandwidth" && s >= 1048576) return ">= 3"
    if (c == "1" && cs == "rate" && s == 8) return ">= 3"
    if (c == "2" && m == "latency" && s == 8) return "<= 1.15"
    if (c == "2" && m == "bandwidth" && s == 4194304) return ">= 0.95"
    if (c == "3" && m == "latency" && s == 8) return "<= 1.03"
    if (c == "3" && (cs == "rate" && s == 8 || m == "bandwidth" && s == 4194304)) return ">= 0.971"
    if (c == "4" && cs == "rate" && s == 8) return ">= 1.5"
    if (c == "6" && m == "latency" && (s == 8 || s == 1024)) return "<= 1"
    if (c == "6" && cs == "rate" && s == 8) return ">= 1.5"
    if (c == "6" && cs == "rate" && s == 4096) return ">= 1.2"
    if (c == "6" && m == "bandwidth" && (s == 1048576 || s == 4194304)) return ">= 0.97"
    if ((c == "5a" || c == "5b") && cs == "io") return "<= 1.2"
    if (c == "5a") return "<= 0.5"
    if (c == "5b") return "<= 1"
    # Thread communicators: epmpi faster than MPICH 4.2 own on every row.
    if ((c == "7" || c == "8") && (m == "latency" || cs == "coll")) return "<= 1"
    if (c == "7" || c == "8") return ">= 1"
    return ""
}
function csvq(s) { return "\"" s "\"" }
FNR == NR { sub(/^desc /, ""); id = $1; sub(/^[^ ]+ /, ""); split($0, d, "|"); ep[id] = d[1]; bs[id] = d[2]; next }
{
    k = $1 SUBSEP $3 SUBSEP $4 SUBSEP $5
    if (!(k in seen)) { seen[k] = 1; order[++nk] = k; unit[k] = $7 }
    vals[k, $2] = vals[k, $2] " " $6
}
END {
    print "config,epmpi,baseline,case,metric,size_bytes,unit,better,baseline_median,epmpi_median,ratio_epmpi_over_baseline,target,met,runs,baseline_min,baseline_max,epmpi_min,epmpi_max"
    for (i = 1; i <= nk; i++) {
        k = order[i]; split(k, f, SUBSEP)
        better = unit[k] == "us" ? "lower" : "higher"
        bm = median(vals[k, "baseline"]); blo = lo; bhi = hi; n = count
        if (f[1] == "memcpy") {
            printf "memcpy,,%s,%s,%s,%d,%s,%s,%.6g,,,,,%d,%.6g,%.6g,,\n", csvq(f[2] == "handoff" ? "two threads (no MPI)" : f[2] == "ucx" ? "UCX tag API between two processes (no MPI)" : f[2] == "shm" ? "rings in shared memory between two processes (no MPI)" : f[3] == "halves" ? "memcpy: two threads a half each" : "memcpy: one thread"), f[2], f[3], f[4], unit[k], better, bm, n, blo, bhi
            continue
        }
        em = median(vals[k, "epmpi"]); elo = lo; ehi = hi
        ratio = bm > 0 ? em / bm : 0
        t = target(f[1], f[2], f[3], f[4]); met = ""
        if (t != "") { split(t, tt, " "); met = (tt[1] == "<=" ? ratio <= tt[2] + 0 : ratio >= tt[2] + 0) ? "yes" : "no" }
        printf "%s,%s,%s,%s,%s,%d,%s,%s,%.6g,%.6g,%.4g,%s,%s,%d,%.6g,%.6g,%.6g,%.6g\n", f[1], csvq(ep[f[1]]), csvq(bs[f[1]]), f[2], f[3], f[4], unit[k], better, bm, em, ratio, t, met, n, blo, bhi, elo, ehi
    }
}' "$tmp/desc" "$tmp/samples" > "$OUT/latest.csv"

# ---- the table ------------------------------------------------------------------
# Every row with a target, and a few sizes of each other measurement (the CSV
# and the plots have them all).
{
    echo "epmpi / baseline: for times (us) lower is better, for GB/s and Mmsg/s higher is better."
    echo
    echo "$selected" | while read -r id ep base cases; do
        printf -- '- %s: %s  vs  %s\n' "$id" "$(describe "$ep")" "$(describe "$base")"
    done
    echo
    awk -F, '
    function human(s) {
        if (s == 0) return "-"
        if (s >= 1048576 && s % 1048576 == 0) return s / 1048576 " MiB"
        if (s >= 1024 && s % 1024 == 0) return s / 1024 " KiB"
        return s " B"
    }
    function shown(c, cs, m, s, t) {
        if (t != "") return 1
        if (cs ~ /^rma_/) return m == "latency" ? s == 8 : cs != "rma_fence" && cs != "rma_lock" && s == 1048576
        if (m == "latency") return s == 8 || s == 1024
        if (m == "bandwidth") return s == 65536 || s == 1048576 || s == 4194304 || s == 16777216
        return 1
    }
    NR == 1 { next }
    $1 == "memcpy" && $4 == "handoff" && $5 == "latency" { ho = sprintf("%.3g us", $9); next }
    $1 == "memcpy" && $4 == "handoff" && $5 == "msgrate" { hr = sprintf("%.3g Mmsg/s", $9); next }
    $1 == "memcpy" && $4 == "handoff" && $5 ~ /^window/ {
        c = $5; sub(/^window\+?/, "", c)
        wr = wr sprintf("%s%s %.3g Mmsg/s", wr == "" ? "" : ", ", c == "" ? "free calls" : c " per call", $9); next
    }
    $1 == "memcpy" && $4 == "ucx" && ($5 ~ /^msgrate/ || $5 == "latency" && $6 <= 4096 || $5 == "bandwidth" && $6 >= 1048576) {
        uf = uf sprintf("%s%s %s %.3g %s", uf == "" ? "" : ", ", human($6), $5, $9, $7); next
    }
    $1 == "memcpy" && $4 == "ucx" { next }
    $1 == "memcpy" && $4 == "shm" && ($5 == "msgrate" || $5 == "latency") {
        sf = sf sprintf("%s%s %s %.3g %s", sf == "" ? "" : ", ", human($6), $5, $9, $7); next
    }
    $1 == "memcpy" && $4 == "shm" { next }
    $1 == "memcpy" && $5 == "halves" { if ($6 >= 1048576) mh = mh sprintf("%s%s %.3g GB/s", mh == "" ? "" : ", ", human($6), $9); next }
    $1 == "memcpy" { if ($6 >= 1048576) mc = mc sprintf("%s%s %.3g GB/s", mc == "" ? "" : ", ", human($6), $9); next }
    shown($1, $4, $5, $6, $12) {
        if (!hdr++) {
            printf "| %-3s | %-18s | %-7s | %-6s | %-6s | %10s | %10s | %8s | %-15s |\n", "cfg", "measure", "size", "unit", "better", "baseline", "epmpi", "epmpi/bl", "target"
            printf "|-----|--------------------|---------|--------|--------|-----------:|-----------:|---------:|-----------------|\n"
        }
        tg = $12 == "" ? "" : $12 " " ($13 == "yes" ? "met" : "MISSED")
        printf "| %-3s | %-18s | %-7s | %-6s | %-6s | %10.4g | %10.4g | %8.3f | %-15s |\n", $1, $4 " " $5, human($6), $7, $8, $9, $10, $11, tg
    }
    END {
        if (mc != "") printf "\nmemcpy bandwidth, one thread: %s\n", mc
        if (mh != "") printf "\nmemcpy bandwidth, two threads copying a half each (the limit for a large message between threads, which both threads copy): %s\n", mh
        if (ho != "") printf "\nThread handoff, one way (two threads passing a flag in one cache line, no MPI: the floor of any message between threads): %s\n", ho
        if (hr != "") printf "\nThread ring, streamed (two threads passing 8 B messages through a ring of 64-byte slots, no MPI: the floor of any message rate between threads): %s\n", hr
        if (sf != "") printf "\nShared-memory floor (epmpi-bench --case shm: the ping-pong and rate structures through rings of slots in memory two processes share, each message copied in and out, no MPI or matching): %s\n", sf
        if (uf != "") printf "\nUCX floor (epmpi-bench --case ucx: the ping-pong and rate structures straight on UCX'"'"'s tag API between two processes, no MPI): %s\n", uf
        if (wr != "") printf "\nRate structure without MPI (the rate case'"'"'s windows of 64 x 8 B through a ring of 64-byte slots, matched in order, the next window posted before the acknowledgement; each send and receive call costing what is named, all else free): %s\n", wr
    }
    ' "$OUT/latest.csv"
    echo
    echo "Medians of $REPS alternating runs; $elapsed s in all; load average $uptime_before before, $uptime_after after; $(date -u '+%Y-%m-%d %H:%M UTC')."
    if [ -s "$tmp/header" ]; then sed 's/^# /Program: /' "$tmp/header"; fi
} > "$OUT/table.md"
echo
cat "$OUT/table.md"
echo
echo "== wrote $OUT/latest.csv and $OUT/table.md"
[ "$PLOTS" = 0 ] || draw_plots
