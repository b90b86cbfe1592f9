#!/usr/bin/env bash
# Time `hpcprof run` takes after the profiled program exits, by stage: REPS runs, then medians.
#   after exit   the program's end to `hpcprof run`'s return (agent flush at exit, conversion,
#                summary): wall, and the CPU `hpcprof run` itself spent (its total less the
#                program's), which the machine's load does not inflate
#   quiet        the same with -q (no summary): after exit - quiet = the summary
#   conversion   `hpcprof merge` of the same raw capture (kept with --keep-raw), wall and CPU;
#                other = quiet - conversion (reading the raw folder's end, its removal, start)
#   second pass  the query the summary of earlier versions ran over the finished trace
#                (analyzer::ioGroups), in sqlite3: what the summary no longer costs
#   pack         `hpcprof pack` of the trace (column-wise, and --whole where the build has it),
#                with the sizes of every form per event, and the CPU of a report on each
# The program (LOOP):
#   io      (default) the pwrite loop: CALLS 1-byte pwrite calls, one thread
#   mpi     bench/mpi/mpi_overhead on RANKS ranks under mpirun, CALLS/3 calls of each of its three
#           loops (1,000 warm-up calls)
#   lammps  LAMMPS (Debian's lmp) on RANKS ranks, a small LJ melt that exchanges halos every step
#           and writes a dump and a thermo line every 20 (bench/agent/lammps_mixed.in): MPI and
#           file I/O mixed, ~26 events per step, so CALLS/26 steps
# QUICK=1 leaves out the second pass, pack and reports (the runs at 10 M and 100 M events).
# Wall times carry the machine's load; the CPU columns (user + system) do not.
# Events per second are over the trace's events.
#
#   [LOOP=io|mpi|lammps] [RANKS=2] [QUICK=1] bench/agent/after_exit.sh [BUILD] [CALLS] [REPS] [DIR]
#   bench/agent/after_exit.sh build 1000000 5
set -euo pipefail
loop_kind=${LOOP:-io}
ranks=${RANKS:-2}
quick=${QUICK:-0}
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
calls=${2:-1000000}
reps=${3:-5}
dir=$(realpath -m "${4:-$(mktemp -d)}")
hpcprof=$build/bin/hpcprof
loop=$build/bench/pwrite_loop
mkdir -p "$dir"
stamp=$dir/exit-stamp
now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", (b - a) / 1e9}'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# Thread buffer big enough for every call: the benchmark measures conversion, not dropping.
export HPCPROF_THREAD_BUFFER_MB=${HPCPROF_THREAD_BUFFER_MB:-512}

query="SELECT t.process_id, s.value, COALESCE(os.value, '(unknown)'), COALESCE(o.kind, 'unknown'),
 COUNT(*), SUM(e.dur), SUM(COALESCE(e.bytes, 0)), SUM(CASE WHEN e.depth = 0 THEN e.dur ELSE 0 END)
 FROM event e JOIN track t ON t.id = e.track_id JOIN category c ON c.id = e.category_id
 JOIN string s ON s.id = e.name_id LEFT JOIN object o ON o.id = e.object_id
 LEFT JOIN string os ON os.id = o.name_id WHERE c.class = 'io' GROUP BY 1, 2, 3, 4"
# "wall cpu" of a command (GNU time), its output dropped.
timed() {
    /usr/bin/time -f '%e %U %S' -o "$dir/time.txt" "$@" >/dev/null 2>&1
    awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$dir/time.txt"
}
# Builds before the column-wise form have no --whole (their pack is the whole-file form).
whole=
"$hpcprof" pack --help 2>/dev/null | grep -q -- --whole && whole=yes
declare -a after quiet conv convcpu pass passcpu pack packcpu rplain rpacked wpack wpackcpu rwhole
# The program, under sh: when it has exited, sh writes the time (realtime ns) to $stamp and its
# children's CPU (the program's, `times`) to $dir/cpu, so that the CPU `hpcprof run` itself spent
# after the exit is its total (GNU time) less the program's: a figure the machine's load does not
# inflate the way it does wall times.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
case $loop_kind in
io) command="$loop $calls" ;;
mpi) command="mpirun -np $ranks $build/bench/mpi_overhead $((calls / 3)) 1000" ;;
lammps)
    command="cd $dir && mpirun -np $ranks lmp -in $here/lammps_mixed.in -var steps $((calls / 26)) -log none -screen none"
    ;;
*) echo "after_exit: LOOP is io, mpi or lammps" >&2; exit 2 ;;
esac
program=(sh -c "$command >/dev/null && { date +%s%N > $stamp; times > $dir/cpu; }")
# The CPU seconds of `hpcprof run` after the program's exit: GNU time's total less `times`'s
# children line (the program's user and system time).
cpu_after() {
    awk 'FNR == 1 && FILENAME ~ /time.txt$/ {t = $2 + $3}
         FILENAME ~ /cpu$/ && FNR == 2 {for (i = 1; i <= 2; ++i) {split($i, p, /[ms]/); c += p[1] * 60 + p[2]}}
         END {printf "%.3f\n", t - c}' "$dir/time.txt" "$dir/cpu"
}
declare -a aftercpu quietcpu
for ((i = 0; i < reps; i++)); do
    rm -rf "$dir"/t.hpcprof* "$dir"/m.hpcprof* "$dir"/q.hpcprof* "$dir"/w.hpcprof*
    /usr/bin/time -f '%e %U %S' -o "$dir/time.txt" \
        "$hpcprof" run -o "$dir/t.hpcprof" --keep-raw -- "${program[@]}" >/dev/null 2>"$dir/run.err"
    end=$(now)
    after+=("$(secs "$(cat "$stamp")" "$end")")
    aftercpu+=("$(cpu_after)")
    /usr/bin/time -f '%e %U %S' -o "$dir/time.txt" \
        "$hpcprof" run -q -o "$dir/q.hpcprof" -- "${program[@]}" >/dev/null
    end=$(now)
    quiet+=("$(secs "$(cat "$stamp")" "$end")")
    quietcpu+=("$(cpu_after)")
    rm -f "$dir/q.hpcprof"
    read -r w c < <(timed "$hpcprof" merge "$dir/t.hpcprof.raw" -o "$dir/m.hpcprof")
    conv+=("$w") convcpu+=("$c")
    rm -rf "$dir/m.hpcprof" "$dir/t.hpcprof.raw"
    [[ $quick == 1 ]] && continue
    read -r w c < <(timed sqlite3 "$dir/t.hpcprof" "$query")
    pass+=("$w") passcpu+=("$c")
    read -r w c < <(timed "$hpcprof" pack "$dir/t.hpcprof" -o "$dir/t.hpcprof.zst")
    pack+=("$w") packcpu+=("$c")
    read -r w c < <(timed "$hpcprof" report "$dir/t.hpcprof" --format json)
    rplain+=("$c")
    read -r w c < <(timed "$hpcprof" report "$dir/t.hpcprof.zst" --format json)
    rpacked+=("$c")
    if [[ -n $whole ]]; then
        read -r w c < <(timed "$hpcprof" pack --whole "$dir/t.hpcprof" -o "$dir/w.hpcprof.zst")
        wpack+=("$w") wpackcpu+=("$c")
        read -r w c < <(timed "$hpcprof" report "$dir/w.hpcprof.zst" --format json)
        rwhole+=("$c")
    fi
done
events=$(sqlite3 "$dir/t.hpcprof" "SELECT SUM(event_count) FROM track")
plain=$(stat -c %s "$dir/t.hpcprof")
a=$(median "${after[@]}") q=$(median "${quiet[@]}") c=$(median "${conv[@]}") cc=$(median "${convcpu[@]}")
rate() { awk -v e="$events" -v s="$1" 'BEGIN {print e / s / 1e6}'; }
echo "loop: $loop_kind ($("$hpcprof" --version 2>/dev/null | head -1))"
echo "runs after exit (s): ${after[*]}"
echo "runs quiet (s):      ${quiet[*]}"
echo "runs after exit, hpcprof run's CPU (s): ${aftercpu[*]}"
echo "runs quiet, CPU (s): ${quietcpu[*]}"
echo "runs conversion (s): ${conv[*]}"
echo "runs conversion CPU (s): ${convcpu[*]}"
printf 'events %d\n' "$events"
ac=$(median "${aftercpu[@]}") qc=$(median "${quietcpu[@]}")
printf 'after exit   %7.3f s wall, %7.3f s CPU: %5.2f M events/s, %5.2f M events per CPU-second\n' \
    "$a" "$ac" "$(rate "$a")" "$(rate "$ac")"
printf '  summary    %7.3f s wall, %7.3f s CPU  (after exit - the same with -q: %.3f s, %.3f s CPU)\n' \
    "$(awk -v a="$a" -v q="$q" 'BEGIN {print a - q}')" "$(awk -v a="$ac" -v q="$qc" 'BEGIN {print a - q}')" "$q" "$qc"
printf '  conversion %7.3f s wall, %7.3f s CPU: %5.2f M events per CPU-second (hpcprof merge of the same capture)\n' \
    "$c" "$cc" "$(rate "$cc")"
printf '  other      %7.3f s wall, %7.3f s CPU  (-q - conversion: reading the raw folder'"'"'s end, its removal)\n' \
    "$(awk -v q="$q" -v c="$c" 'BEGIN {print q - c}')" "$(awk -v q="$qc" -v c="$cc" 'BEGIN {print q - c}')"
printf 'size plain   %d B  %.2f B/event\n' "$plain" "$(awk -v b="$plain" -v e="$events" 'BEGIN {print b / e}')"
[[ $quick == 1 ]] && exit 0
packed=$(stat -c %s "$dir/t.hpcprof.zst")
p=$(median "${pack[@]}") pc=$(median "${packcpu[@]}") sp=$(median "${passcpu[@]}")
printf '  the second pass earlier summaries made: %.3f s CPU (sqlite3, median %s s wall)\n' "$sp" \
    "$(median "${pass[@]}")"
printf 'size packed  %d B  %.2f B/event  (hpcprof pack %.3f s wall, %.3f s CPU)\n' "$packed" \
    "$(awk -v b="$packed" -v e="$events" 'BEGIN {print b / e}')" "$p" "$pc"
printf 'report --format json, CPU: plain %.3f s, packed %.3f s\n' "$(median "${rplain[@]}")" \
    "$(median "${rpacked[@]}")"
if [[ -n $whole ]]; then
    wsize=$(stat -c %s "$dir/w.hpcprof.zst")
    printf 'size whole   %d B  %.2f B/event  (pack --whole %.3f s wall, %.3f s CPU; report CPU %.3f s)\n' \
        "$wsize" "$(awk -v b="$wsize" -v e="$events" 'BEGIN {print b / e}')" "$(median "${wpack[@]}")" \
        "$(median "${wpackcpu[@]}")" "$(median "${rwhole[@]}")"
fi
