# SPDX-License-Identifier: MIT
"""Command-line conventions (issue 24): --version, man pages and bash completion that match
--help, progress only on a terminal, and the demo (`scripts/setup.sh demo`).

Run by ctest (tests/CMakeLists.txt) with HPCPROF, HPCPROF_BUILD_DIR, HPCPROF_SOURCE_DIR and
HPCPROF_BUILT_SOURCES ("MPI=1,CUPTI=0,...", CMake's configure results) in the environment.
"""
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

HPCPROF = os.environ["HPCPROF"]
BUILD = Path(os.environ["HPCPROF_BUILD_DIR"])
SOURCE = Path(os.environ["HPCPROF_SOURCE_DIR"])
QUIET_ENV = {**os.environ, "HPCPROF_PROGRESS_DELAY_MS": "0"}  # progress at once, if at all


def run(*args, **kwargs):
    return subprocess.run([HPCPROF, *args], capture_output=True, text=True, **kwargs)


def subcommands():
    """The subcommands `hpcprof --help` lists."""
    help_text = run("--help").stdout
    listing = help_text.split("Subcommands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in listing.splitlines() if line.strip()]


def options_in_help(sub):
    """Every option name (-o, --output, ...) in `hpcprof SUB --help`."""
    text = run(sub, "--help").stdout
    names = set()
    for line in text.split("Options:\n", 1)[1].splitlines():
        m = re.match(r"^  (-[\w-]+(?:,-[\w-]+)*)", line)
        if m:
            names.update(m.group(1).split(","))
    assert "--help" in names, text
    return names


ALL_SUBCOMMANDS = subcommands()


def test_help_lists_the_subcommands():
    assert {"run", "merge", "report", "diff", "import", "export", "view", "completion"} \
        <= set(ALL_SUBCOMMANDS)


def test_version_names_commit_and_the_sources_built():
    done = run("--version")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"hpcprof \d+\.\d+\.\d+", lines[0])
    commit = lines[1].removeprefix("commit ")
    head = subprocess.run(["git", "-C", str(SOURCE), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True)
    if head.returncode == 0:  # a git checkout (not a tarball)
        assert commit.removesuffix("-dirty") == head.stdout.strip(), \
            "the binary names another commit than HEAD: rebuild it (cmake --build) after committing"
    expected = dict(kv.split("=") for kv in os.environ["HPCPROF_BUILT_SOURCES"].split(","))
    with_ = lines[2].removeprefix("built with: ")
    without = lines[3].removeprefix("built without: ")
    said = {s: True for s in with_.split(", ") if s != "-"}
    said.update({s: False for s in without.split(", ") if s != "-"})
    assert said == {name: value == "1" for name, value in expected.items()}


def man_text(page):
    path = BUILD / "share" / "man" / "man1" / f"{page}.1"
    assert path.is_file(), f"{path} was not generated (help2man missing?)"
    # roff escapes every '-' as '\-'.
    return path.read_text().replace("\\-", "-").replace("\\fB", "").replace("\\fR", "")


@pytest.mark.parametrize("sub", ALL_SUBCOMMANDS)
def test_every_option_in_help_is_in_the_man_page(sub):
    text = man_text(f"hpcprof-{sub}")
    assert f"\nhpcprof-{sub} - " in text  # the NAME line
    missing = [o for o in options_in_help(sub) if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)]
    assert not missing, f"hpcprof-{sub}.1 lacks {missing}"


def test_top_man_page_lists_every_subcommand():
    text = man_text("hpcprof")
    assert "--version" in text
    for sub in ALL_SUBCOMMANDS:
        assert re.search(rf"^{sub}\b", text, re.M) or f"hpcprof-{sub}" in text, sub


def complete(*words):
    """What the generated bash completion offers for the command line WORDS (last: being typed)."""
    script = BUILD / "share" / "bash-completion" / "completions" / "hpcprof"
    assert script.is_file()
    line = " ".join(shlex.quote(w) for w in ("hpcprof", *words))
    # compopt works only inside real completion; the fallback to file names is not checked here.
    program = (f"compopt() {{ :; }}; source {shlex.quote(str(script))}; COMP_WORDS=({line}); "
               f"COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); _hpcprof; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_completion_offers_the_subcommands():
    assert complete("").issuperset(ALL_SUBCOMMANDS)
    assert complete("re") == {"report"}


@pytest.mark.parametrize("sub", ALL_SUBCOMMANDS)
def test_completion_offers_every_option_in_help(sub):
    assert complete(sub, "-") == options_in_help(sub)


def test_completion_offers_fixed_values():
    assert complete("report", "t.hpcprof", "--format", "") == {"text", "md", "html", "json", "junit"}
    assert complete("import", "--align", "c") == {"collectives"}
    assert "mpirun" in complete("run", "-o", "t.hpcprof", "--", "mpiru")


@pytest.fixture(scope="module")
def raw_capture(tmp_path_factory):
    """A kept raw capture of io_sample and its trace."""
    folder = tmp_path_factory.mktemp("progress")
    done = run("run", "-q", "--keep-raw", "-o", str(folder / "t.hpcprof"), "--",
               str(BUILD / "samples" / "io_sample"), str(folder))
    assert done.returncode == 0, done.stderr
    return folder


def test_no_progress_when_stderr_is_not_a_terminal(raw_capture):
    for args in (["merge", str(raw_capture / "t.hpcprof.raw"), "-o", str(raw_capture / "pipe.hpcprof")],
                 ["report", str(raw_capture / "t.hpcprof")]):
        done = run(*args, env=QUIET_ENV)
        assert done.returncode == 0, done.stderr
        assert "\r" not in done.stderr and "\033" not in done.stderr, done.stderr
        assert "converting" not in done.stderr and "analysing" not in done.stderr


def in_terminal(args):
    """Runs hpcprof ARGS with stdin, stdout and stderr on a pseudo-terminal (script(1))."""
    if not shutil.which("script"):
        pytest.skip("script (util-linux) is missing")
    command = " ".join(shlex.quote(a) for a in (HPCPROF, *args))
    return terminal_output(subprocess.run(["script", "-qec", command, "/dev/null"],
                                          capture_output=True, env=QUIET_ENV))


def terminal_output(done):
    # Bytes decoded by hand: text=True would turn the '\r' progress redraws into newlines.
    done.stdout = done.stdout.decode(errors="replace")
    return done


def test_progress_on_a_terminal_is_drawn_then_erased(raw_capture):
    done = in_terminal(["merge", str(raw_capture / "t.hpcprof.raw"), "-o", str(raw_capture / "tty.hpcprof")])
    assert done.returncode == 0, done.stdout
    assert "\r\033[Khpcprof: converting" in done.stdout
    # Erased before the summary line, which starts on a clean line.
    assert "\r\033[Khpcprof merge: " in done.stdout
    done = in_terminal(["report", str(raw_capture / "t.hpcprof")])
    assert "\r\033[Khpcprof: analysing" in done.stdout


def test_progress_off_with_hpcprof_progress_0(raw_capture):
    if not shutil.which("script"):
        pytest.skip("script (util-linux) is missing")
    command = f"HPCPROF_PROGRESS=0 {shlex.quote(HPCPROF)} report {shlex.quote(str(raw_capture / 't.hpcprof'))}"
    done = terminal_output(subprocess.run(["script", "-qec", command, "/dev/null"],
                                          capture_output=True, env=QUIET_ENV))
    assert done.returncode == 0
    assert "analysing" not in done.stdout and "\033[K" not in done.stdout


def test_report_output_written_in_pieces_is_the_stdout_report_and_a_full_device_fails(raw_capture):
    """The JSON report goes to its output piece by piece (never the whole text at once): the file
    equals what stdout gets; a device that fills up gives exit code 2 and says so."""
    trace = str(raw_capture / "t.hpcprof")
    to_stdout = run("report", trace, "--format", "json")
    assert to_stdout.returncode == 0, to_stdout.stderr
    out = raw_capture / "r.json"
    to_file = run("report", trace, "--format", "json", "-o", str(out))
    assert to_file.returncode == 0, to_file.stderr
    assert out.read_text() == to_stdout.stdout
    assert '"schema": "hpcprof-report"' in to_stdout.stdout
    if Path("/dev/full").exists():
        full = run("report", trace, "--format", "json", "-o", "/dev/full")
        assert full.returncode == 2
        assert "cannot write /dev/full" in full.stderr
