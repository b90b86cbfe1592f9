#!/usr/bin/env bash
# Agent overhead per intercepted call, measured side by side: REPS runs of the pwrite loop
# without the agent, with it, and with it but without the provisioning helper
# (HPCPROF_PROVISION_HELPER=0), alternating, each run CALLS calls. For each: the median wall
# time per call, the median CPU time of the calling thread per call, and the median CPU time of
# the whole process tree per call (the program plus the agent's helper task, from `times`).
#
#   bench/agent/overhead.sh [BUILD_DIR] [REPS] [CALLS]
set -euo pipefail
build=${1:-build}
reps=${2:-7}
calls=${3:-2000000}
loop=$build/bench/pwrite_loop
agent=$build/lib/libhpcprof.so
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT

# Runs the loop in a subshell; prints "wall thread_cpu tree_cpu" in ns per call.
run() {
    rm -rf "${raw:?}"/*
    (
        out=$("$@" "$loop" "$calls")
        # `times` (run in this shell, not a pipeline), second line: user and system time of
        # this subshell's finished children, i.e. the program and the helper it reaped.
        times >"$raw/times"
        echo "$out $(tail -1 "$raw/times" | tr -d 's' | awk -v n="$calls" -F'[ m]' \
            '{printf "%.2f", ($1 * 60 + $2 + $3 * 60 + $4) * 1e9 / n}')"
    )
}
# Thread buffer big enough for every call: the benchmark measures recording, not dropping.
with_agent=(env HPCPROF_RAW_DIR="$raw" HPCPROF_THREAD_BUFFER_MB=512 LD_PRELOAD="$agent")
declare -a w0 c0 t0 w1 c1 t1 w2 c2 t2
for ((i = 0; i < reps; i++)); do
    read -r a b c < <(run env); w0+=("$a"); c0+=("$b"); t0+=("$c")
    read -r a b c < <(run "${with_agent[@]}"); w1+=("$a"); c1+=("$b"); t1+=("$c")
    read -r a b c < <(run "${with_agent[@]}" HPCPROF_PROVISION_HELPER=0); w2+=("$a"); c2+=("$b"); t2+=("$c")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
row() {
    printf '%-28s wall %8.2f  thread CPU %8.2f  process CPU %8.2f ns/call\n' "$1" \
        "$(median "${@:2:reps}")" "$(median "${@:2+reps:reps}")" "$(median "${@:2+2*reps:reps}")"
}
echo "runs (wall ns/call) without: ${w0[*]}"
echo "runs (wall ns/call) with:    ${w1[*]}"
echo "runs (wall ns/call) helper off: ${w2[*]}"
row "without agent" "${w0[@]}" "${c0[@]}" "${t0[@]}"
row "with agent" "${w1[@]}" "${c1[@]}" "${t1[@]}"
row "with agent, no helper" "${w2[@]}" "${c2[@]}" "${t2[@]}"
awk -v a="$(median "${w0[@]}")" -v b="$(median "${w1[@]}")" -v c="$(median "${c0[@]}")" \
    -v d="$(median "${c1[@]}")" -v e="$(median "${w2[@]}")" \
    'BEGIN {printf "added per call: %.2f ns wall, %.2f ns thread CPU; without the helper %.2f ns wall\n", b - a, d - c, e - a}'
