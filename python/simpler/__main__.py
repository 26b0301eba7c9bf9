"""Command line: `python -m simpler demo`."""

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simpler")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="build example tensors and task arguments, round-trip a blob, show refusals")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from simpler.demo import run

        return run()
    return 2


if __name__ == "__main__":
    sys.exit(main())
