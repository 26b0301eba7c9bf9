"""Command line: `python -m simpler demo [--levels 3|4] [--trace FILE]`, `python -m simpler wire`,
`python -m simpler launch -n K [--isolate] script.py [args]`, `python -m simpler devices [--platform NAME]`,
and the installed package's paths:
`python -m simpler --includes` (the compiler flag for its headers) and `--cmakedir` (the folder of
its CMake package)."""

import argparse
import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simpler")
    parser.add_argument(
        "--includes",
        action="store_true",
        help="print -I<dir> for simpler's headers (chip kernels, C++ host programs) and exit",
    )
    parser.add_argument(
        "--cmakedir",
        action="store_true",
        help="print the folder of simpler's CMake package (find_package(simpler CONFIG)) and exit",
    )
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser(
        "demo", help="a tiled matmul on 2 chips and a reduction on 2 sub-workers, checked against NumPy"
    )
    demo.add_argument("--trace", metavar="FILE", help="write a Chrome-trace timeline of the run (Perfetto)")
    demo.add_argument(
        "--levels",
        type=int,
        choices=(3, 4),
        default=3,
        help="3: one host Worker with 2 chips (default); 4: a level-4 Worker over 2 level-3 Workers of 2 chips each",
    )
    demo.add_argument(
        "--device",
        choices=("simulated", "opencl"),
        default="simulated",
        help="what the chips drive: the simulated device (default) or an OpenCL device each",
    )
    devices = sub.add_parser(
        "devices",
        help="list the devices chips may drive (OpenCL platforms and devices, as "
        "clinfo would; CUDA, or why not) or say what to install; exit status 1 when no OpenCL "
        "or CUDA device",
    )
    devices.add_argument(
        "--platform",
        default="",
        metavar="NAME",
        help="only platforms whose name contains NAME (any case), as Worker(device_platform=...)",
    )
    sub.add_parser("wire", help="build example tensors and task arguments, round-trip a blob, show refusals")
    launch = sub.add_parser(
        "launch",
        help="run a program with remote Workers under mpirun (rank 0 is the L4, the "
        "other ranks serve its remote L3 Workers)",
    )
    launch.add_argument("-n", type=int, required=True, metavar="K", help="ranks: 1 + the remote Workers")
    launch.add_argument(
        "--isolate",
        action="store_true",
        help="give every non-zero rank a private /dev/shm and TCP-only MPI, as on separate hosts (root)",
    )
    launch.add_argument(
        "--mpirun-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass ARG to mpirun (repeat; e.g. --mpirun-arg=--hostfile --mpirun-arg=hosts)",
    )
    launch.add_argument("program", nargs=argparse.REMAINDER, help="script.py [args]")
    args = parser.parse_args(argv)
    if args.includes or args.cmakedir:
        if args.command is not None:
            parser.error(f"--includes and --cmakedir take no command (got {args.command!r})")
        from simpler.install_paths import get_cmake_dir, get_include

        try:
            if args.includes:
                print(f"-I{get_include()}")
            if args.cmakedir:
                print(get_cmake_dir())
        except RuntimeError as e:
            print(f"python -m simpler: {e}", file=sys.stderr)
            return 1
        return 0
    if args.command is None:
        parser.error("name a command (demo, devices, wire, launch) or ask for --includes / --cmakedir")
    if args.command == "launch":
        from simpler.cli import launch as launcher

        if not args.program:
            parser.error("launch: name the script to run")
        try:
            return launcher.main(args.n, args.program, args.isolate, args.mpirun_arg)
        except RuntimeError as e:  # no MPI here, no mpirun: said in one line, not a traceback
            print(f"python -m {e}", file=sys.stderr)
            return 1
    if args.command == "demo" and args.levels == 4:
        from simpler.cli.demo_tree import run as run_tree

        return run_tree(trace=args.trace, device=args.device)
    if args.command == "demo":
        from simpler.cli.demo import run

        return run(trace=args.trace, device=args.device)
    if args.command == "devices":
        from simpler.cli import device_list

        return device_list.run(args.platform, sys.stdout)
    if args.command == "wire":
        from simpler.cli import wire_demo

        return wire_demo.run()
    return 2


if __name__ == "__main__":
    sys.exit(main())
