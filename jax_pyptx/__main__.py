"""Command line: ``python -m jax_pyptx <command> ...`` (also the ``jax-pyptx`` script).

Commands register themselves in ``COMMANDS`` (name -> (help, add_arguments, run)); this file
stays a small dispatcher.

* ``transpile FILE.ptx [-o OUT.py]``: PTX -> Python that re-traces to the same instructions;
  PTX that ptxas refuses (``parse``'s checks) exits 1 with the error, naming the line.
* ``ptx | sass | resources | run | timeline FILE.py:NAME [--arg K=V ...]``: a kernel of a
  Python file traced, disassembled, compiled, interpreted (against the file's reference), or
  interpreted to a timeline (``jax_pyptx/cli.py``).
"""
from __future__ import annotations

import argparse
import sys

from .cli import COMMANDS as _KERNEL_COMMANDS


def _transpile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="PTX file to read ('-' for standard input)")
    p.add_argument("-o", "--output", help="write the Python here (default: standard output)")


def _transpile_run(args) -> int:
    from .errors import PtxError
    from .transpile import transpile

    if args.output:           # checked first: no work is lost to a path that cannot be written
        import os

        folder = os.path.dirname(os.path.abspath(args.output))
        if not os.path.isdir(folder) or os.path.isdir(args.output):
            why = (f"{args.output!r} is a directory" if os.path.isdir(args.output) else
                   f"its directory {folder!r} does not exist")
            print(f"jax-pyptx transpile: -o {args.output}: {why}; give a file path in an "
                  f"existing directory", file=sys.stderr)
            return 2
    if args.file == "-":
        text, name = sys.stdin.read(), "<stdin>"
    else:
        try:
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            print(f"jax-pyptx transpile: cannot read {args.file}: {e}", file=sys.stderr)
            return 2
        name = args.file
    try:
        src = transpile(text, source=name)
    except PtxError as e:      # bad text, or PTX ptxas refuses (``parse`` checks it)
        print(f"jax-pyptx transpile: {e}", file=sys.stderr)
        return 1
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(src)
        except OSError as e:
            print(f"jax-pyptx transpile: cannot write {args.output}: {e}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(src)
    return 0


COMMANDS = {
    "transpile": ("PTX -> Python (@kernel functions that re-trace to the same PTX)",
                  _transpile_args, _transpile_run),
}
COMMANDS.update(_KERNEL_COMMANDS)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="jax-pyptx", description="jax-pyptx command line tools",
                                 epilog="`jax-pyptx COMMAND --help` describes a command.")
    sub = ap.add_subparsers(dest="command", metavar="command")
    for name, (help_, add, _) in COMMANDS.items():
        add(sub.add_parser(name, help=help_, description=help_))
    args = ap.parse_args(argv)
    if args.command is None:
        ap.print_help()
        return 2
    return COMMANDS[args.command][2](args)


if __name__ == "__main__":
    sys.exit(main())
