"""Click commands generated per model: `kmc check MODEL [model options]`.

Each model's options (bounds, mode, switches) become flags with the model's own names and
ranges, so bad values are refused by click with the flag and what is allowed. The command's
own options (`--engine`, `--max-states`...) may come before the model or after it; a
model's options exist only once the model is named, so they come after it.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable

import click

from kmc import registry
from kmc.cli.config import model_in_front
from kmc.errors import BadInput
from kmc.model.core import Option


def option_decorator(opt: Option) -> Callable[[Any], Any]:
    """A click option for a model option."""
    if isinstance(opt.default, bool):
        name = opt.flag[2:]
        return click.option(f"--{name}/--no-{name}", opt.name, default=opt.default, show_default=True, help=opt.help)
    if isinstance(opt.default, int):
        kind: Any = click.IntRange(opt.min, opt.max)
    else:
        kind = click.Choice(opt.choices) if opt.choices else str
    return click.option(opt.flag, opt.name, type=kind, default=opt.default, show_default=True, help=opt.help)


class ModelGroup(click.Group):
    """A command group whose subcommands are the models: kmc's own, those of installed
    packages, and any model file (`kmc check path/to/model.py[:Class]`).

    `make(model_spec, options)` builds the command for one model.
    """

    def __init__(self, *args: Any, make: Callable[[str, tuple[Option, ...]], click.Command], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._make = make

    takes_model = True  # run files may name the model (kmc/cli/config.py)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, model_in_front(self._model_first(args), registry.is_model, registry.names))

    def _model_first(self, args: list[str]) -> list[str]:
        """`kmc check --engine scalar MODEL ...` as `kmc check MODEL --engine scalar ...`: the
        model moved in front of the command's own options that precede it."""
        if not args or not args[0].startswith("-"):
            return args
        takes_value: dict[str, bool] = {}
        for p in self._make(registry.names()[0], ()).params:  # the options every model's command has
            if isinstance(p, click.Option):
                takes_value.update({o: not p.is_flag for o in [*p.opts, *p.secondary_opts]})
        k = 0
        while k < len(args):
            arg = args[k]
            if arg == "--" or arg in ("-h", "--help"):
                return args
            if not arg.startswith("-"):
                return [arg, *args[:k], *args[k + 1:]]
            flag, inline = arg.split("=", 1)[0], "=" in arg
            if flag not in takes_value:
                raise click.UsageError(self._misplaced(flag, args, list(takes_value)))
            k += 2 if takes_value[flag] and not inline else 1
        return args

    def _misplaced(self, flag: str, args: list[str], generic: list[str]) -> str:
        """The message for an option before the model that is not one of the command's own."""
        named = [a for a in args if not a.startswith("-") and (a in registry.names() or registry.is_path(a))]
        if named:
            try:
                options = [o.flag for o in registry.model_class(named[0]).options]
            except BadInput:
                options = []
            if flag in options or (flag.startswith("--no-") and "--" + flag[5:] in options):
                return (f"{flag} before the model: a model's own options (its mode, bounds and switches) follow its "
                        f"name, as kmc {self.name} {named[0]} {flag} ...; only {self.name}'s options may come before it")
        near = difflib.get_close_matches(flag, generic, n=1)
        return f"no such option: {flag}" + (f" (did you mean {near[0]}?)" if near else "")

    def list_commands(self, ctx: click.Context) -> list[str]:
        return registry.names()

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._make(name, registry.model_class(name).options)  # BadInput (exit 2) when unknown

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        name = args[0] if args else ""
        if not name.startswith("-"):
            registry.resolve(name)  # an unknown model or a bad model file: one line, exit 2
        return super().resolve_command(ctx, args)


def apply_options(command: Callable[..., Any], options: tuple[Option, ...]) -> Callable[..., Any]:
    for opt in reversed(options):
        command = option_decorator(opt)(command)
    return command
