"""The throughput searches on simulated DUTs, measured side by side in one run.

1. ndr_pdr and mlr against two VSPERF binary searches (NDR and PDR) at the shipped resolution
   (0.1 % of line rate), on the noisy families the searches were tuned on (issue 16's target:
   at least 5x fewer trial-seconds, every answer within its noise band): bench/search_vs_binary.py.
2. ndr_pdr and mlr against CSIT's own MLRsearch 1.2.1 on the same DUTs with the same trial noise
   (issue 22's targets: median trial-seconds at or below MLRsearch's in every family and
   configuration, the worst case within 1.5x, every answer within its band, no search without an
   answer), with 60 s and 10 s finals and CSIT's goals, on the noisy families and on a DUT model
   nobody tuned on (gaussian noise, stalls): bench/search_vs_csit.py.

Needs MLRsearch: `.venv/bin/pip install -e .[bench]` (pyproject.toml's bench extra).

Run: .venv/bin/python bench/bench_searches.py [--seeds N] [--csit-seeds N] [--part 1|2] [--processes P]
     (defaults 5, 10, both, 2: part 1 about 10 s of CPU, part 2 a few minutes)
"""

from __future__ import annotations

import argparse
import os
import sys

import search_vs_binary
import search_vs_csit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds per case of part 1")
    parser.add_argument("--csit-seeds", type=int, default=10, help="seeds per case of part 2")
    parser.add_argument("--part", type=int, choices=(1, 2), help="run one part only")
    parser.add_argument("--processes", type=int, default=2, help="worker processes of part 2")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    met = True
    if args.part in (None, 1):
        met = search_vs_binary.main(args.seeds) and met
        print()
    if args.part in (None, 2):
        met = search_vs_csit.main(args.csit_seeds, args.processes) and met
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
