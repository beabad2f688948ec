"""Run files: `kmc check --config run.toml` (and compare, gate).

A run file is flat TOML whose keys are the command's own long flags without the dashes
(`mode`, `max-records`, `engine`, `invariant = [...]`, `continue = true`), plus `model` for
the commands that take one. Nothing here knows the flags: the keys allowed are read from the
command's click parameters, so an option another part of kmc adds to a command is accepted
in run files at once. File values become the command's defaults, so flags given on the
command line override them. An unknown key or a value of the wrong type is an error naming
the file, the line and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from kmc.registry import is_path
from kmc.tomlfile import TomlFile, type_name

_SKIP = {"help", "config"}


def config_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add `--config FILE` to a command: the file's values become the command's defaults."""
    return click.option(
        "--config", type=click.Path(dir_okay=False, path_type=Path), is_eager=True, expose_value=False,
        callback=_load, metavar="FILE",
        help="TOML run file: keys are this command's flags without dashes (and model); flags given here win",
    )(command)


def model_in_front(args: list[str], is_model: Callable[[str], bool], models: Callable[[], list[str]]) -> list[str]:
    """`kmc check --config run.toml`: the model named in the run file, put where the model
    argument goes, unless the command line names one. A model file named in a run file is
    taken relative to the run file. (`models()`, every model's name, only for an error.)"""
    if args and (is_model(args[0]) or is_path(args[0])):
        return args
    path = _config_path(args)
    if path is None:
        return args
    f = TomlFile(path, "run file")
    model = f.data.get("model")
    if model is None:
        raise f.error("no 'model' key: name the model in the run file or on the command line")
    if not isinstance(model, str):
        raise f.error(f"key 'model' must be a string (got {type_name(model)})", key="model")
    if is_path(model):
        return [str((path.parent / model.split(":")[0]).resolve()) + model[len(model.split(":")[0]):], *args]
    if not is_model(model):
        raise f.error(f"unknown model {model!r}; allowed: {', '.join(models())}, or a model file", key="model")
    return [model, *args]


def _config_path(args: list[str]) -> Path | None:
    for k, arg in enumerate(args):
        if arg == "--config" and k + 1 < len(args):
            return Path(args[k + 1])
        if arg.startswith("--config="):
            return Path(arg.split("=", 1)[1])
    return None


def _load(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    if value is None:
        return
    f = TomlFile(value, "run file")
    ctx.default_map = {**(ctx.default_map or {}), **defaults(f, ctx)}


def keys_of(command: click.Command) -> dict[str, click.Option]:
    """The keys a run file may use for `command`: each long flag without its dashes."""
    out: dict[str, click.Option] = {}
    for p in command.params:
        if not isinstance(p, click.Option) or p.name in _SKIP:
            continue
        for opt in p.opts:
            if opt.startswith("--"):
                out[opt[2:]] = p
    return out


def defaults(f: TomlFile, ctx: click.Context) -> dict[str, Any]:
    """The run file's values by parameter name, each checked as its flag would be."""
    allowed = keys_of(ctx.command)
    takes_model = ctx.parent is not None and getattr(ctx.parent.command, "takes_model", False)
    out: dict[str, Any] = {}
    for key, value in f.data.items():
        if key == "model" and takes_model:
            continue  # chose the command already (model_in_front)
        p = allowed.get(key) or allowed.get(key.replace("_", "-"))
        if p is None:
            shown = sorted(allowed) + (["model"] if takes_model else [])
            raise f.error(f"unknown key {key!r}; allowed: {', '.join(shown)}", key=key)
        assert p.name is not None
        out[p.name] = _convert(f, ctx, p, key, value)
    return out


def _convert(f: TomlFile, ctx: click.Context, p: click.Option, key: str, value: Any) -> Any:
    if p.multiple:
        items = value if isinstance(value, list) else [value]
        return tuple(_one(f, ctx, p, key, v) for v in items)
    if isinstance(value, list) and all(isinstance(v, str) for v in value) and _is_text(p):
        value = ",".join(value)  # modes = ["hw", "epoch"] for --modes hw,epoch
    return _one(f, ctx, p, key, value)


def _is_text(p: click.Option) -> bool:
    return p.type is click.STRING


def _one(f: TomlFile, ctx: click.Context, p: click.Option, key: str, value: Any) -> Any:
    t = p.type
    if p.is_flag and p.is_bool_flag:
        want, ok = "a boolean", isinstance(value, bool)
    elif isinstance(t, click.types._NumberParamTypeBase) and t._number_class is int:  # INT, IntRange
        want, ok = "an integer", isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(t, click.types._NumberParamTypeBase):  # FLOAT, FloatRange
        want, ok = "a number", isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(t, click.Choice):
        want = "one of " + ", ".join(repr(c) for c in t.choices)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # acks = 1
        ok = isinstance(value, str)
    elif _is_text(p) or isinstance(t, click.Path):
        want, ok = "a string", isinstance(value, str)
    else:  # a type of kmc's own (a size): its convert says what it takes
        want, ok = "a string or an integer", isinstance(value, (str, int)) and not isinstance(value, bool)
    if not ok:
        raise f.error(f"key {key!r} must be {want} (got {type_name(value)})", key=key)
    try:
        return t.convert(value, p, ctx)
    except click.BadParameter as e:
        raise f.error(f"key {key!r}: {e.message}", key=key)
