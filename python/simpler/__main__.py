"""Command line: `python -m simpler demo [--levels 3|4] [--trace FILE]`, `python -m simpler wire` and
`python -m simpler launch -n K [--isolate] script.py [args]`."""

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
    launch = sub.add_parser("launch", help="run a program with remote Workers under mpirun (rank 0 is the L4, the "
                                           "other ranks serve its remote L3 Workers)")
    launch.add_argument("-n", type=int, required=True, metavar="K", help="ranks: 1 + the remote Workers")
    launch.add_argument("--isolate", action="store_true",
                        help="give every non-zero rank a private /dev/shm and TCP-only MPI, as on separate hosts "
                             "(root)")
    launch.add_argument("--mpirun-arg", action="append", default=[], metavar="ARG",
                        help="pass ARG to mpirun (repeat; e.g. --mpirun-arg=--hostfile --mpirun-arg=hosts)")
    launch.add_argument("program", nargs=argparse.REMAINDER, help="script.py [args]")
    args = parser.parse_args(argv)
    if args.command == "launch":
        from simpler import launch as launcher

        if not args.program:
            parser.error("launch: name the script to run")
        return launcher.main(args.n, args.program, args.isolate, args.mpirun_arg)
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
