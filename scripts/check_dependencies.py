#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that every folder includes only what it may (docs/architecture.md, "Dependency
rules"). Run by the test suite; exits 1 and names each violation.

    scripts/check_dependencies.py [SOURCE_DIR]

Each source file belongs to a module by its path; each quoted include is resolved the way the
compiler would (next to the file first, then the module's include folders, then from the project
root) and must land in a module the including one may use. System headers that belong to one
capture source (cupti.h, papi.h, ...) may only be included by that source's folder. gui/ must
hold no SQL text.
"""
import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)

# Where the public headers of a library are found ("hpcprof/<lib>/..." includes).
PUBLIC_ROOTS = {
    "hpcprof/schema/": "schemas/include/",
    "hpcprof/status.hpp": "schemas/include/",
    "hpcprof/store/": "store/include/",
    "hpcprof/import/": "import/include/",
    "hpcprof/analyzer/": "analyzer/include/",
    "hpcprof/report/": "analyzer/include/",
    "hpcprof/launch/": "agent/launch/include/",
}
GENERATED = ("hpcprof/config.hpp", "hpcprof/store_families.inc", "hpcprof/analysis_families.inc",
             "hpcprof/report_families.inc")

# The include folders of each module's own sources (its target's private include folders).
MODULE_DIRS = {
    "agent": ["agent/"],
    "store": ["store/"],
    "import": ["import/"],
    "analyzer": ["analyzer/src/", "analyzer/src/report/"],
    "gui": ["gui/"],
    "cli": ["cli/"],
}

# Private include folders of the libraries the families' facets join.
FACET_DIRS = {
    "store": ["store/"],
    "analysis": ["analyzer/src/"],
    "report": ["analyzer/src/report/", "analyzer/src/"],
}


def module_of(rel: str) -> str:
    """The module a path (relative to the root) belongs to."""
    parts = rel.split("/")
    top = parts[0]
    if top == "agent":
        return "agent.launch" if len(parts) > 1 and parts[1] == "launch" else "agent"
    if top == "analyzer":
        if rel.startswith("analyzer/include/"):
            return "analyzer.public"
        return "analyzer"
    if top in ("store", "import"):
        return top + (".public" if rel.startswith(top + "/include/") else "")
    if top == "families":
        return "families/" + parts[1] if len(parts) > 2 else "families"
    if top == "schemas":
        return "schemas"
    return top  # cli, gui, samples, tests, bench, scripts, cmake


# Which modules each module may include (its own always; tests and bench anything).
ALLOWED = {
    "agent": {"agent.launch", "schemas"},
    "agent.launch": {"schemas"},
    "schemas": set(),
    "store": {"store.public", "schemas"},
    "store.public": {"schemas"},
    "import": {"import.public", "store.public", "schemas"},
    "import.public": {"schemas", "store.public"},
    "analyzer": {"analyzer.public", "schemas"},
    "analyzer.public": {"schemas"},
    "cli": {"store.public", "import.public", "analyzer.public", "agent.launch", "schemas"},
    "gui": {"analyzer.public", "schemas"},
    "samples": set(),
}
# The GUI shows the families' results: it may include their result types (the short kernel
# names are the report core's public header), never a facet's private headers.
GUI_FAMILY_HEADERS = re.compile(r"^families/[a-z_]+/[a-z_]+_section\.hpp$")
# A family facet may use its library's private headers and the public ones below it.
FACET_ALLOWED = {
    "store": {"store", "store.public", "schemas"},
    "analysis": {"analyzer", "analyzer.public", "schemas"},
    "report": {"analyzer", "analyzer.public", "schemas"},
}

# System headers that belong to one capture source: (pattern, folders that may include them).
OWNED_SYSTEM_HEADERS = [
    (re.compile(r"^cupti"), ("agent/cupti/", "tests/")),
    (re.compile(r"^papi\.h$"), ("agent/counters/", "tests/")),
    (re.compile(r"^infiniband/"), ("agent/ibverbs/", "tests/", "bench/rdma/")),
    (re.compile(r"^mpi\.h$"), ("agent/mpi/", "samples/mpi/", "tests/", "bench/mpi/")),
    (re.compile(r"^nccl\.h$"), ("agent/nccl/", "samples/", "tests/")),
    (re.compile(r"^omp-tools\.h$"), ("agent/openmp/",)),
    (re.compile(r"^sqlite3\.h$"), ("schemas/", "store/", "import/", "analyzer/", "families/",
                                    "tests/", "bench/")),
    (re.compile(r"^Q[A-Za-z]+$"), ("gui/", "tests/", "bench/gui/")),
]

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)
SOURCES = ("*.cpp", "*.hpp", "*.h", "*.c", "*.cu")
SKIP = ("build", ".git", "tests/data", "docs")


def family_facets(root: Path) -> dict:
    """families/<f>/<file> -> facet, from each family's hpcprof_family() call."""
    facets = {}
    for cml in root.glob("families/*/CMakeLists.txt"):
        text = cml.read_text()
        for facet, key in (("store", "STORE"), ("analysis", "ANALYSIS"), ("report", "REPORT")):
            m = re.search(key + r"\s+([^)]*?)(?=\b(?:STORE|ANALYSIS|REPORT)\b|\))", text, re.S)
            if m:
                for name in m.group(1).split():
                    facets[str(cml.parent.relative_to(root) / name)] = facet
    return facets


def resolve(rel_file: str, target: str, facet_dirs: list) -> str | None:
    """The path (relative to the root) `#include "target"` names in `rel_file`, or None."""
    here = (ROOT / rel_file).parent
    local = (here / target).resolve()
    if local.exists():
        return str(local.relative_to(ROOT.resolve()))
    for prefix, base in PUBLIC_ROOTS.items():
        if target.startswith(prefix) and (ROOT / base / target).exists():
            return base + target
    for d in facet_dirs:
        if (ROOT / d / target).exists():
            return d + target
    if (ROOT / target).exists():
        return target
    return None


def main() -> int:
    facets = family_facets(ROOT)
    # Which facets use each family header (a header is checked against each of them).
    header_facets: dict = {}
    files = [p for pat in SOURCES for p in ROOT.rglob(pat)
             if not any(str(p.relative_to(ROOT)).startswith(s) for s in SKIP)]
    texts = {str(p.relative_to(ROOT)): p.read_text(errors="replace") for p in files}
    for rel, facet in facets.items():
        for _, target in ((q, t) for q, t in INCLUDE.findall(texts.get(rel, "")) if q == '"'):
            r = resolve(rel, target, FACET_DIRS[facet])
            if r and r.startswith("families/"):
                header_facets.setdefault(r, set()).add(facet)
    problems = []
    for rel, text in sorted(texts.items()):
        mod = module_of(rel)
        if mod in ("tests", "bench", "scripts", "cmake"):
            continue
        if mod.startswith("families/"):
            file_facets = {facets[rel]} if rel in facets else header_facets.get(rel, set())
            if not file_facets:
                problems.append(f"{rel}: a family file no facet uses (list it in hpcprof_family)")
                continue
        else:
            file_facets = set()
        for quote, target in INCLUDE.findall(text):
            if quote == "<":
                for pattern, owners in OWNED_SYSTEM_HEADERS:
                    if pattern.search(target) and not rel.startswith(owners):
                        problems.append(f"{rel}: includes <{target}>, which only {', '.join(owners)} may")
                continue
            if target in GENERATED:
                continue
            dirs = [d for f in file_facets for d in FACET_DIRS[f]] + MODULE_DIRS.get(mod, [])
            resolved = resolve(rel, target, dirs)
            if resolved is None:
                problems.append(f'{rel}: cannot resolve "{target}"')
                continue
            if ".." in Path(target).parts:
                problems.append(f'{rel}: "{target}" climbs out of its folder')
            tmod = module_of(resolved)
            if tmod == mod:
                continue
            if file_facets:
                if all(tmod in FACET_ALLOWED[f] for f in file_facets):
                    continue
                problems.append(f'{rel} ({"/".join(sorted(file_facets))} facet) includes {resolved}')
                continue
            if mod == "gui" and GUI_FAMILY_HEADERS.match(resolved):
                continue
            if tmod not in ALLOWED.get(mod, set()):
                problems.append(f"{rel} ({mod}) includes {resolved} ({tmod})")
        if mod == "gui" and re.search(r'"[^"\n]*\b(SELECT|INSERT|UPDATE|DELETE)\b[^"\n]*\bFROM\b', text):
            problems.append(f"{rel}: SQL text in the GUI (ask the analyzer's API instead)")
    for p in problems:
        print("dependency check:", p)
    print(f"dependency check: {len(texts)} files, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
