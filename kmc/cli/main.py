"""The `kmc` command: a click group; each command is thin: parse, call, print. Exit codes
are those of kmc/exits.py: this module turns errors and interruptions into theirs."""

from __future__ import annotations

import gc
import importlib
import signal
import sys
import traceback
from types import FrameType

import click

from kmc import __version__
from kmc import exits
from kmc.errors import BadInput, RunFailed

# each command's module, imported when the command runs (or `kmc --help` lists them): a run of
# `kmc check` does not load the web server of `explore`, the tables of `bench`, the TOML of `gate`
COMMANDS = {"check": "kmc.cli.check", "compare": "kmc.cli.compare", "list": "kmc.cli.listing",
            "prove": "kmc.cli.prove", "trace": "kmc.cli.trace", "bench": "kmc.cli.bench", "gate": "kmc.cli.gate",
            "graph": "kmc.cli.graph", "simulate": "kmc.cli.simulate", "explore": "kmc.cli.explore"}


class Commands(click.Group):
    """The group of kmc's commands, each imported from its module (COMMANDS) when it is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name])
        command = getattr(module, "list_models" if cmd_name == "list" else cmd_name)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kmc")
def cli() -> None:
    """kmc: a model checker for Apache Kafka's replication and transaction protocols."""


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # kmc's own process: a SIGTERM (CI's timeout, kill) stops it as Ctrl-C does
        signal.signal(signal.SIGTERM, _terminated)
    try:
        rc = cli.main(args=argv, prog_name="kmc", standalone_mode=False)
    except click.exceptions.Exit as e:
        rc = e.exit_code
    except click.exceptions.Abort as e:  # click's form of Ctrl-C: the KeyboardInterrupt is its cause
        click.echo(_interrupted(e.__cause__), err=True)
        rc = exits.INTERRUPTED
    except click.exceptions.NoArgsIsHelpError as e:
        click.echo(e.ctx.get_help() if e.ctx else e.format_message(), err=True)
        rc = exits.USAGE
    except click.UsageError as e:
        click.echo(f"kmc: error: {_one_line(e.format_message())}", err=True)
        rc = exits.USAGE
    except BadInput as e:
        click.echo(f"kmc: error: {_one_line(str(e))}", err=True)
        rc = exits.USAGE
    except click.ClickException as e:
        click.echo(f"kmc: error: {_one_line(e.format_message())}", err=True)
        rc = exits.USAGE
    except RunFailed as e:
        click.echo(f"kmc: error: {_one_line(str(e))}", err=True)
        rc = exits.INTERNAL
    except KeyboardInterrupt as e:
        click.echo(_interrupted(e), err=True)
        rc = exits.INTERRUPTED
    except Exception:
        click.echo("kmc: internal error (please report it with the command line):", err=True)
        traceback.print_exc()
        rc = exits.INTERNAL
    if argv is None:
        # the objects left go with the process: finalization then skips the collections that
        # would trace them all again (0.09-0.12 s of a 2.3 s run of kraft)
        gc.freeze()
        sys.exit(rc or 0)
    return int(rc or 0)


def _terminated(signum: int, frame: FrameType | None) -> None:
    """SIGTERM as Ctrl-C: the run's statistics are printed and its temporary files (levels
    spilled to disk, Spark's folder) go with it, where the default action would leave them."""
    raise KeyboardInterrupt


def _interrupted(cause: BaseException | None) -> str:
    """The one line for Ctrl-C: the run's own statistics when it gave them (kmc/cli/progress.py)."""
    said = str(cause) if isinstance(cause, KeyboardInterrupt) else ""
    return said if said.startswith("kmc: interrupted") else "kmc: interrupted"


def _one_line(message: str) -> str:
    return " ".join(message.split())


if __name__ == "__main__":
    main()
