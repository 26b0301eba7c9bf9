"""Command line: `python -m simpler demo [--levels 3|4] [--trace FILE]` and `python -m simpler wire`."""

import argparse
import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simpler")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="a tiled matmul on 2 simulated chips and a reduction on 2 sub-workers, "
                                       "checked against NumPy")
    demo.add_argument("--trace", metavar="FILE", help="write a Chrome-trace timeline of the run (Perfetto)")
    demo.add_argument("--levels", type=int, choices=(3, 4), default=3,
                      help="3: one host Worker with 2 chips (default); 4: a level-4 Worker over 2 level-3 Workers "
                           "of 2 chips each")
    sub.add_parser("wire", help="build example tensors and task arguments, round-trip a blob, show refusals")
    args = parser.parse_args(argv)
    if args.command == "demo" and args.levels == 4:
        from simpler.demo_tree import run as run_tree

        return run_tree(trace=args.trace)
    if args.command == "demo":
        from simpler.demo import run

        return run(trace=args.trace)
    if args.command == "wire":
        from simpler import wire_demo

        return wire_demo.run()
    return 2


if __name__ == "__main__":
    sys.exit(main())
