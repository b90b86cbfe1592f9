#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Spack recipe (packaging/spack/package.py) parses, has the variants issue 24 asks for,
maps each to HPCPROF_WITH_<NAME> options the build really has, and depends on something for
each variant. Spack itself is not needed: the recipe is read with ast, not imported.

Usage: check_spack_recipe.py SOURCE_DIR
"""
import ast
import re
import sys
from pathlib import Path

REQUIRED = {"cuda", "mpi", "papi", "ibverbs", "gui"}


def calls(tree, name):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == name]


def when_of(call):
    return next((ast.literal_eval(k.value) for k in call.keywords if k.arg == "when"), None)


def main():
    source = Path(sys.argv[1])
    tree = ast.parse((source / "packaging/spack/package.py").read_text())
    cmake = "".join(p.read_text() for p in [source / "CMakeLists.txt", *(source / "cmake").glob("*.cmake")])
    options = set(re.findall(r"^hpcprof_dependency\((\w+)", cmake, re.M))
    variants = {ast.literal_eval(c.args[0]) for c in calls(tree, "variant")}
    mapping = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                   if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "option_of_variant")
    whens = {when_of(c) for c in calls(tree, "depends_on")}
    errors = [f"variant {v} is missing" for v in sorted(REQUIRED - variants)]
    errors += [f"variant {v} maps to no option" for v in sorted(variants - mapping.keys())]
    errors += [f"variant {v}: no HPCPROF_WITH_{o} in the build" for v, os_ in mapping.items()
               for o in os_ if o not in options]
    errors += [f"variant {v} has no depends_on(..., when='+{v}')" for v in sorted(variants)
               if f"+{v}" not in whens]
    print(f"variants {sorted(variants)}; build options {sorted(options)}")
    for e in errors:
        print("FAIL", e)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
