"""The ``compatfuzz`` command line: a thin dispatcher over one module per command.

Each command lives in ``compatfuzz._commands.<name>`` with ``add_arguments(parser)`` and
``run(args) -> int``, so the parts stay independent and importing the CLI stays cheap.
Exit codes: 0 success, 1 a property or compatibility check failed, 2 usage or input error
(never a traceback with exit 1 for bad input: 1 must always mean "breaking" or "failed").
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from compatfuzz.errors import CompatfuzzError, CompatfuzzWarning

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("compatfuzz._commands.init", "write a commented compatfuzz.toml for a CRD or "
             "schema files"),
    "sample": ("compatfuzz._commands.sample", "print generated objects as JSON lines"),
    "fuzz": ("compatfuzz._commands.fuzz", "round-trip every version pair (nightly job)"),
    "diff": ("compatfuzz._commands.diff", "check two schema revisions for breaking changes"),
    "report": ("compatfuzz._commands.report", "merge the reports of a sharded nightly job "
               "(report merge out/shard-*.json)"),
    "apiserver": ("compatfuzz._commands.apiserver", "build kube-apiserver and etcd for "
                  "--apiserver real (apiserver install), or print their folder (apiserver "
                  "path)"),
}


class _Parser(argparse.ArgumentParser):
    """Usage errors in two lines: what was wrong, and where the options are listed.

    argparse prints the whole usage first, which for ``fuzz`` is twelve lines of options
    above the one line that says what was wrong.  Subcommands inherit the class
    (``add_subparsers`` makes parsers of the parent's type)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # the innermost parser that parsed: a subcommand's defaults win over its parent's
        # (argparse copies the subparser's namespace over), so it names extra arguments
        self.set_defaults(**{_OWNER: self})

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n  see: {self.prog} --help\n")


_OWNER = "_compatfuzz_parser"


def _parser(argv: Sequence[str] | None = None
            ) -> tuple[argparse.ArgumentParser, dict[str, object]]:
    """The parser, with the arguments of the command ``argv`` names (of every command when
    it names none: ``--help``, or a typo argparse lists the choices for).

    Only the command that runs is imported: ``diff`` alone pulls in the compatibility
    engine, about half a second that each ``fuzz`` process (and each of its shards' pods)
    would otherwise pay at start-up."""
    words = list(sys.argv[1:] if argv is None else argv)
    chosen = words[0] if words and words[0] in COMMANDS else None
    parser = _Parser(
        prog="compatfuzz",
        description="Property-based compatibility testing for versioned APIs.",
    )
    from compatfuzz import __version__

    parser.add_argument("--version", action="version", version=f"compatfuzz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules: dict[str, object] = {}
    for name, (module_name, help_text) in COMMANDS.items():
        if chosen is not None and name != chosen:
            sub.add_parser(name, help=help_text)  # listed, never parsed: not imported
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        modules[name] = module
        cmd = sub.add_parser(name, help=help_text, description=module.__doc__)
        module.add_arguments(cmd)
    return parser, modules


def _hypothesis_home(args: argparse.Namespace) -> None:
    """Point ``HYPOTHESIS_STORAGE_DIRECTORY`` at the project's ``.hypothesis`` unless the
    user set it.  Only for a whole process: Hypothesis reads it once."""
    import os

    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    from compatfuzz.roundtrip._engine._database import project_home

    config = getattr(args, "config", None)
    if config is None and getattr(args, "replay", None) is None and args.command == "fuzz":
        from compatfuzz.roundtrip import find_config

        config = find_config()
    try:
        home = project_home(config)
    except OSError:
        return
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(home / ".hypothesis")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code.

    Run as a program (``argv`` is ``None``), it also ends the process when a converter
    left a non-daemon thread running, which Python would otherwise wait for forever after
    the run completed.
    """
    code = _main(argv)
    if argv is None:
        _exit_despite_threads(code)
    return code


def _exit_despite_threads(code: int, grace: float = 1.0) -> None:
    """``os._exit(code)`` after a warning if non-daemon threads outlive ``grace`` seconds;
    return if there are none."""
    import contextlib
    import os
    import threading
    import time

    end = time.monotonic() + grace
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(max(0.0, end - time.monotonic()))
    left = [t for t in threading.enumerate()
            if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if not left:
        return
    names = ", ".join(repr(t.name) for t in left[:5]) + (" ..." if len(left) > 5 else "")
    command = sys.argv[1] if len(sys.argv) > 1 else "compatfuzz"
    print(f"compatfuzz {command}: warning: {len(left)} non-daemon thread"
          f"{'s' if len(left) > 1 else ''} ({names}) still running after the command "
          f"ended, started by user code (a converter module); exiting with status {code} "
          "without waiting for them (start threads with daemon=True, or join them)",
          file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe must not change the status
            stream.flush()
    os._exit(code)


def _main(argv: Sequence[str] | None) -> int:
    parser, modules = _parser(argv)
    args, extra = parser.parse_known_args(argv)
    owner = vars(args).pop(_OWNER, parser)
    if extra:  # "compatfuzz fuzz: error: unrecognized arguments", not "compatfuzz: ..."
        owner.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    module = modules[args.command]
    if argv is None:
        # Run as a program: Hypothesis's other files (.hypothesis/constants, ...) go beside
        # the project's config too, not into whatever folder the command ran in.
        _hypothesis_home(args)
    from compatfuzz._commands._pipe import PipeSafeStdout

    stdout = sys.stdout
    sys.stdout = PipeSafeStdout(stdout)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", CompatfuzzWarning)
            shown = warnings.showwarning
            said: set[str] = set()

            def show(message: Warning | str, category: type[Warning], *rest: Any,
                     **kw: Any) -> None:
                # our warnings name the file and path already: one plain line each, once
                # per run (each unit builds its strategies anew and would say it again)
                if issubclass(category, CompatfuzzWarning):
                    text = str(message)
                    if args.command == "diff":  # its fix as diff can take it
                        text = getattr(message, "without_overrides", text)
                    if text not in said:
                        said.add(text)
                        print(f"compatfuzz {args.command}: warning: {text}",
                              file=sys.stderr)
                else:
                    shown(message, category, *rest, **kw)

            warnings.showwarning = show
            return int(module.run(args))  # type: ignore[attr-defined]
    except CompatfuzzError as exc:
        from compatfuzz.roundtrip._text import printable

        # file names, labels and values in the message are the user's or a file's text
        print(f"compatfuzz {args.command}: error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except RecursionError:
        # a backstop: readers bound nesting themselves and name the file and path
        print(f"compatfuzz {args.command}: error: an input is nested too deeply to process "
              "(RecursionError)\n  fix: flatten deeply nested schemas with $defs and $ref",
              file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"compatfuzz {args.command}: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout.flush()
        sys.stdout = stdout


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
