#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Debian packages install a working hpcprof (issue 24).

Usage: check_deb_packages.py CPACK BUILD_DIR IO_SAMPLE HAVE_MPI HAVE_QT

Runs `cpack -G DEB` on the build folder into a temporary folder, extracts the packages with
`dpkg-deb -x` into a fresh root, checks their file lists and Depends fields (no Qt in the base
package), then profiles io_sample with the extracted `hpcprof run` from a folder outside the
build tree with no LD_LIBRARY_PATH or HPCPROF_AGENT, and checks `hpcprof report` gives the bytes
and calls the sample is written to make (samples/io/io_sample.c).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def build_packages(cpack, build, out):
    run([cpack, "--config", build / "CPackConfig.cmake", "-G", "DEB", "-B", out], cwd=build)
    debs = {run(["dpkg-deb", "-f", d, "Package"]).strip(): d for d in out.glob("*.deb")}
    print("packages:", ", ".join(f"{k} ({v.name}, {v.stat().st_size} B)" for k, v in debs.items()))
    return debs


def check_base(deb, root, have_mpi):
    files = set(run(["dpkg-deb", "-c", deb]).split())
    for path in ["usr/bin/hpcprof", "usr/lib/libhpcprof.so", "usr/share/man/man1/hpcprof.1",
                 "usr/share/man/man1/hpcprof-run.1", "usr/share/bash-completion/completions/hpcprof",
                 "usr/share/doc/hpcprof/user-guide.md"] + (["usr/lib/libhpcprof_mpi.so"] if have_mpi else []):
        check(any(f.endswith("./" + path) for f in files), f"hpcprof package holds /{path}")
    check(not any("hpcprof-gui" in f for f in files), "hpcprof package holds no hpcprof-gui")
    depends = run(["dpkg-deb", "-f", deb, "Depends"]).strip()
    print("hpcprof Depends:", depends)
    check("libc6" in depends, "hpcprof Depends names libc6 (from dpkg-shlibdeps)")
    check("qt" not in depends.lower(), "hpcprof Depends names no Qt")
    run(["dpkg-deb", "-x", deb, root])


def check_gui(deb, root):
    files = run(["dpkg-deb", "-c", deb])
    check("./usr/bin/hpcprof-gui" in files, "hpcprof-gui package holds /usr/bin/hpcprof-gui")
    check("./usr/bin/hpcprof\n" not in files, "hpcprof-gui package does not hold the CLI")
    depends = run(["dpkg-deb", "-f", deb, "Depends"]).strip()
    print("hpcprof-gui Depends:", depends)
    check("hpcprof (=" in depends, "hpcprof-gui depends on hpcprof of its version")
    check("libqt6widgets6" in depends, "hpcprof-gui depends on Qt 6 Widgets")
    run(["dpkg-deb", "-x", deb, root])


def profile_sample(root, sample, work):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "HPCPROF_AGENT") and not k.startswith("HPCPROF")}
    env["PATH"] = f"{root}/usr/bin:/usr/bin:/bin"
    shutil.copy(sample, work / "io_sample")
    (work / "data").mkdir()
    hpcprof = root / "usr/bin/hpcprof"
    r = subprocess.run([hpcprof, "run", "-o", "t.hpcprof", "--", "./io_sample", "data"],
                       cwd=work, env=env, capture_output=True, text=True)
    print(r.stderr)
    check(r.returncode == 0 and r.stdout == "io_sample done\n", "extracted hpcprof run profiles io_sample")
    report = json.loads(run([hpcprof, "report", "--format", "json", "t.hpcprof"], cwd=work, env=env))
    files = {Path(f["name"]).name: (f["bytes"], f["count"]) for f in report["top"]["files"]}
    print("files:", files)
    # Bytes and calls io_sample makes (its header comment); each file: open ... close.
    check(files.get("posix.dat") == (39804, 15), "posix.dat: 39804 B in 15 calls")
    check(files.get("stdio.dat") == (5120, 12), "stdio.dat: 5120 B in 12 calls")
    check(files.get("thread.dat") == (2331, 10), "thread.dat: 2331 B in 10 calls")


def main():
    cpack, build, sample = sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()
    have_mpi, have_qt = sys.argv[4] == "1", sys.argv[5] == "1"
    with tempfile.TemporaryDirectory(prefix="hpcprof-deb-") as tmp:
        tmp = Path(tmp)
        debs = build_packages(cpack, build, tmp / "debs")
        check("hpcprof" in debs, "cpack wrote the hpcprof package")
        check(("hpcprof-gui" in debs) == have_qt, "cpack wrote hpcprof-gui exactly when Qt was built")
        root, work = tmp / "root", tmp / "work"
        work.mkdir()
        if "hpcprof" in debs:
            check_base(debs["hpcprof"], root, have_mpi)
            profile_sample(root, sample, work)
        if "hpcprof-gui" in debs:
            check_gui(debs["hpcprof-gui"], root)
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")


if __name__ == "__main__":
    main()
