#!/usr/bin/env bash
# Time `hpcprof run` takes after the profiled program exits, by stage, on the pwrite loop
# (CALLS 1-byte pwrite calls, one thread): REPS runs, then medians.
#   after exit   the program's last clock reading to `hpcprof run`'s return (agent flush at exit,
#                conversion, summary)
#   quiet        the same with -q (no summary): after exit - quiet = the summary
#   conversion   `hpcprof merge` of the same raw capture (kept with --keep-raw), wall and CPU
#   second pass  the query the summary of earlier versions ran over the finished trace
#                (analyzer::ioGroups), in sqlite3: what the summary no longer costs
#   pack         `hpcprof pack` of the trace (column-wise, and --whole where the build has it),
#                with the sizes of every form per event, and the CPU of a report on each
# LOOP=mpi: the MPI loop instead (bench/mpi/mpi_overhead, RANKS ranks, CALLS/3 calls of each of
# its three loops, 1,000 warm-up calls), recorded with the agent preloaded under mpirun (as
# bench/mpi/overhead.sh does): no exit stamp, so only the conversion, pack and report columns.
# Wall times carry the machine's load; the CPU columns (user + system) do not.
# Events per second are over the program's events (CALLS and the few of its start and end).
#
#   bench/agent/after_exit.sh [BUILD] [CALLS] [REPS] [DIR]
#   bench/agent/after_exit.sh build 1000000 5
set -euo pipefail
loop_kind=${LOOP:-io}
ranks=${RANKS:-2}
build=${1:-build}
calls=${2:-1000000}
reps=${3:-5}
dir=${4:-$(mktemp -d)}
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
# The MPI loop: the agent preloaded under mpirun, the raw capture left in t.hpcprof.raw.
record_mpi() {
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    mkdir -p "$dir/t.hpcprof.raw"
    mpirun -np "$ranks" -x LD_PRELOAD="$build/lib/libhpcprof.so:$build/lib/libhpcprof_mpi.so" \
        -x HPCPROF_RAW_DIR="$dir/t.hpcprof.raw" -x HPCPROF_THREAD_BUFFER_MB \
        "$build/bench/mpi_overhead" $((calls / 3)) 1000 >/dev/null
}
for ((i = 0; i < reps; i++)); do
    rm -rf "$dir"/t.hpcprof* "$dir"/m.hpcprof* "$dir"/q.hpcprof* "$dir"/w.hpcprof*
    if [[ $loop_kind == mpi ]]; then
        record_mpi
    else
        "$hpcprof" run -o "$dir/t.hpcprof" --keep-raw -- "$loop" "$calls" "$stamp" >/dev/null 2>"$dir/run.err"
        end=$(now)
        after+=("$(secs "$(cat "$stamp")" "$end")")
        "$hpcprof" run -q -o "$dir/q.hpcprof" -- "$loop" "$calls" "$stamp" >/dev/null
        end=$(now)
        quiet+=("$(secs "$(cat "$stamp")" "$end")")
    fi
    read -r w c < <(timed "$hpcprof" merge "$dir/t.hpcprof.raw" -o "$dir/m.hpcprof")
    [[ $loop_kind == mpi ]] && cp "$dir/m.hpcprof" "$dir/t.hpcprof"
    conv+=("$w") convcpu+=("$c")
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
    rm -rf "$dir/t.hpcprof.raw"
done
events=$(sqlite3 "$dir/t.hpcprof" "SELECT SUM(event_count) FROM track")
plain=$(stat -c %s "$dir/t.hpcprof")
packed=$(stat -c %s "$dir/t.hpcprof.zst")
a=$(median "${after[@]:-0}") q=$(median "${quiet[@]:-0}") c=$(median "${conv[@]}") p=$(median "${pack[@]}")
cc=$(median "${convcpu[@]}") pc=$(median "${packcpu[@]}") sp=$(median "${passcpu[@]}")
echo "loop: $loop_kind"
echo "runs after exit (s): ${after[*]:-}"
echo "runs quiet (s):      ${quiet[*]:-}"
echo "runs conversion (s): ${conv[*]}"
echo "runs conversion CPU (s): ${convcpu[*]}"
printf 'events %d\n' "$events"
if [[ $loop_kind != mpi ]]; then
    printf 'after exit   %6.3f s  %5.2f M events/s\n' "$a" "$(awk -v e="$events" -v s="$a" 'BEGIN {print e / s / 1e6}')"
    printf '  no summary %6.3f s  (summary %.3f s)\n' "$q" "$(awk -v a="$a" -v q="$q" 'BEGIN {print a - q}')"
fi
printf '  conversion %6.3f s wall, %6.3f s CPU: %5.2f M events per CPU-second (hpcprof merge of the same capture)\n' \
    "$c" "$cc" "$(awk -v e="$events" -v s="$cc" 'BEGIN {print e / s / 1e6}')"
printf '  the second pass earlier summaries made: %.3f s CPU (sqlite3, median %s s wall)\n' "$sp" \
    "$(median "${pass[@]}")"
printf 'size plain   %d B  %.2f B/event\n' "$plain" "$(awk -v b="$plain" -v e="$events" 'BEGIN {print b / e}')"
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
