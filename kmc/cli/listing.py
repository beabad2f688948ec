"""`kmc list`: the models (kmc's own and those installed packages register), where each comes
from, their modes, options and invariants, each with its meaning."""

from __future__ import annotations

import click

from kmc import exits, registry
from kmc.api import ENGINES


@click.command("list")
def list_models() -> int:
    """List models, modes, options, invariants, liveness properties (with their fairness) and engines."""
    for source in registry.sources():
        name, cls = source.spec, source.cls
        model, invariants = registry.build(name)
        click.echo(f"{name}: {cls.summary}")
        click.echo(f"  from: {source.origin}")
        click.echo("  modes:")
        for mode, meaning in cls.modes.items():
            click.echo(f"    {mode:<18} {meaning}")
        click.echo("  options:")
        for opt in cls.options:
            if opt.name != "mode":
                click.echo(f"    {opt.flag:<26} {opt.help} (default {opt.default})")
        click.echo("  invariants:")
        for inv in invariants:
            click.echo(f"    {inv.name:<18} {inv.doc}")
        lemmas = registry.lemmas(name, model)
        if lemmas:
            click.echo("  lemmas (proof aids; kmc check checks one when --invariant names it):")
            for inv in lemmas:
                click.echo(f"    {inv.name:<18} {inv.doc}")
        properties = registry.properties_of(model)
        if properties:
            click.echo("  properties (liveness, under their fairness; kmc check --properties checks them all):")
            for prop in properties:
                click.echo(f"    {prop.name:<18} {prop.doc}")
                click.echo(f"    {'':<18} {prop.describe()}" + ("; checked by default" if prop.default else ""))
        click.echo("")
    click.echo("engines:")
    for name, engine in ENGINES.items():
        click.echo(f"  {name:<8} {engine.summary}")
        click.echo(f"  {'':<8} can: {', '.join(engine.capabilities.names())}")
    return exits.OK
