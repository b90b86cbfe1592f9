#!/usr/bin/env bash
# Time `hpcprof run` takes after the profiled program exits, by stage, on the pwrite loop
# (CALLS 1-byte pwrite calls, one thread): REPS runs, then medians.
#   after exit   the program's last clock reading to `hpcprof run`'s return (agent flush at exit,
#                conversion, summary)
#   quiet        the same with -q (no summary): after exit - quiet = the summary
#   conversion   `hpcprof merge` of the same raw capture (kept with --keep-raw), wall and CPU
#   second pass  the query the summary of earlier versions ran over the finished trace
#                (analyzer::ioGroups), in sqlite3: what the summary no longer costs
#   pack         `hpcprof pack` of the trace, with the sizes of both forms per event, and the
#                cost of a report on either form
# Wall times carry the machine's load; the CPU columns (user + system) do not.
# Events per second are over the program's events (CALLS and the few of its start and end).
#
#   bench/agent/after_exit.sh [BUILD] [CALLS] [REPS] [DIR]
#   bench/agent/after_exit.sh build 1000000 5
set -euo pipefail
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
declare -a after quiet conv convcpu pass passcpu pack packcpu rplain rpacked
for ((i = 0; i < reps; i++)); do
    rm -rf "$dir"/t.hpcprof* "$dir"/m.hpcprof* "$dir"/q.hpcprof*
    "$hpcprof" run -o "$dir/t.hpcprof" --keep-raw -- "$loop" "$calls" "$stamp" >/dev/null 2>"$dir/run.err"
    end=$(now)
    after+=("$(secs "$(cat "$stamp")" "$end")")
    "$hpcprof" run -q -o "$dir/q.hpcprof" -- "$loop" "$calls" "$stamp" >/dev/null
    end=$(now)
    quiet+=("$(secs "$(cat "$stamp")" "$end")")
    read -r w c < <(timed "$hpcprof" merge "$dir/t.hpcprof.raw" -o "$dir/m.hpcprof")
    conv+=("$w") convcpu+=("$c")
    read -r w c < <(timed sqlite3 "$dir/t.hpcprof" "$query")
    pass+=("$w") passcpu+=("$c")
    read -r w c < <(timed "$hpcprof" pack "$dir/t.hpcprof" -o "$dir/t.hpcprof.zst")
    pack+=("$w") packcpu+=("$c")
    read -r w c < <(timed "$hpcprof" report "$dir/t.hpcprof" --format json)
    rplain+=("$c")
    read -r w c < <(timed "$hpcprof" report "$dir/t.hpcprof.zst" --format json)
    rpacked+=("$c")
    rm -rf "$dir/t.hpcprof.raw"
done
events=$(sqlite3 "$dir/t.hpcprof" "SELECT SUM(event_count) FROM track")
plain=$(stat -c %s "$dir/t.hpcprof")
packed=$(stat -c %s "$dir/t.hpcprof.zst")
a=$(median "${after[@]}") q=$(median "${quiet[@]}") c=$(median "${conv[@]}") p=$(median "${pack[@]}")
cc=$(median "${convcpu[@]}") pc=$(median "${packcpu[@]}") sp=$(median "${passcpu[@]}")
echo "runs after exit (s): ${after[*]}"
echo "runs quiet (s):      ${quiet[*]}"
echo "runs conversion (s): ${conv[*]}"
printf 'events %d\n' "$events"
printf 'after exit   %6.3f s  %5.2f M events/s\n' "$a" "$(awk -v e="$events" -v s="$a" 'BEGIN {print e / s / 1e6}')"
printf '  no summary %6.3f s  (summary %.3f s)\n' "$q" "$(awk -v a="$a" -v q="$q" 'BEGIN {print a - q}')"
printf '  conversion %6.3f s wall, %6.3f s CPU: %5.2f M events per CPU-second (hpcprof merge of the same capture)\n' \
    "$c" "$cc" "$(awk -v e="$events" -v s="$cc" 'BEGIN {print e / s / 1e6}')"
printf '  the second pass earlier summaries made: %.3f s CPU (sqlite3, median %s s wall)\n' "$sp" \
    "$(median "${pass[@]}")"
printf 'size plain   %d B  %.2f B/event\n' "$plain" "$(awk -v b="$plain" -v e="$events" 'BEGIN {print b / e}')"
printf 'size packed  %d B  %.2f B/event  (hpcprof pack %.3f s wall, %.3f s CPU)\n' "$packed" \
    "$(awk -v b="$packed" -v e="$events" 'BEGIN {print b / e}')" "$p" "$pc"
printf 'report --format json, CPU: plain %.3f s, packed %.3f s\n' "$(median "${rplain[@]}")" \
    "$(median "${rpacked[@]}")"
