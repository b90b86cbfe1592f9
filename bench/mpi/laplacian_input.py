#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a MUMPS `dsimpletest` input (Debian's mumps-test) for the 7-point Laplacian on an
n x n x n grid, with the right-hand side A * ones so the solution is all ones.

    laplacian_input.py N > input
"""
import sys

n = int(sys.argv[1])
size = n ** 3
rows = []
for z in range(n):
    for y in range(n):
        for x in range(n):
            i = (z * n + y) * n + x + 1
            rows.append((i, i, 6.0))
            for dx, dy, dz in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
                a, b, c = x + dx, y + dy, z + dz
                if 0 <= a < n and 0 <= b < n and 0 <= c < n:
                    rows.append((i, (c * n + b) * n + a + 1, -1.0))
rhs = [0.0] * size
for i, j, v in rows:
    rhs[i - 1] += v
out = sys.stdout
out.write(f"{size} :N\n{len(rows)} :NZ\n")
out.write("".join(f"{i} {j} {v}\n" for i, j, v in rows))
out.write("".join(f"{v}\n" for v in rhs))
