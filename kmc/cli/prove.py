"""`kmc prove MODEL --invariant NAME`: k-induction with z3 (kmc/engines/symbolic/induction.py).

Exit codes (kmc/exits.py): OK proved, VIOLATION counterexample (a real run violates the
invariant or a lemma), NOT_PROVED (not inductive at the largest k tried, or the solver ran out
of time), USAGE.
"""

from __future__ import annotations

import json
from typing import Any

import click

from kmc import api, exits, registry
from kmc.api import COUNTEREXAMPLE, NOT_INDUCTIVE, PROVED, RANGES, Proof
from kmc.cli.limits import Seconds
from kmc.cli.models import ModelGroup, apply_options
from kmc.model.core import Invariant, Model, Option
from kmc.traces import text
from kmc.traces.trace import Step, Trace


def make_prove(name: str, options: tuple[Option, ...]) -> click.Command:
    def callback(**kw: Any) -> int:
        return run_prove_command(name, **kw)

    callback = apply_options(callback, options)
    for deco in reversed(
        [
            click.option("--invariant", "invariant_name", required=True, metavar="NAME",
                         help="the invariant to prove (any of the model's invariants or lemmas)"),
            click.option("--lemma", "lemma_names", multiple=True, metavar="NAME",
                         help="a lemma proved together with it, to make it inductive (repeatable)"),
            click.option("--k", "k", type=click.IntRange(1, None), default=1, show_default=True,
                         help="largest k tried (k = 1, 2, ...): the inductive step looks at k + 1 states"),
            click.option("--timeout", type=Seconds(), default=60.0, show_default=True,
                         help="seconds for the whole proof, shared by every solver call; then 'unknown'"),
            click.option("--json", "as_json", is_flag=True, help="print one JSON object for machines"),
        ]
    ):
        callback = deco(callback)
    cls = registry.model_class(name)
    return click.command(name, help=f"Prove an invariant of the {name} model for every depth: {cls.summary}.")(callback)


def run_prove_command(
    name: str, *, invariant_name: str, lemma_names: tuple[str, ...], k: int, timeout: float, as_json: bool,
    **settings: Any,
) -> int:
    model, invariants = registry.build(name, **settings)
    known = [*invariants, *registry.lemmas(name, model)]
    [invariant] = registry.select(known, [invariant_name])
    lemmas = registry.select(known, list(lemma_names)) if lemma_names else []
    proof = api.prove(model, invariant, lemmas, k=k, timeout=timeout)
    if as_json:
        click.echo(json.dumps(proof.to_json(), indent=1))
    else:
        click.echo(model.title())
        click.echo(render(model, proof, {i.name: i for i in known}))
    if proof.verdict == PROVED:
        return exits.OK
    return exits.VIOLATION if proof.verdict == COUNTEREXAMPLE else exits.NOT_PROVED


def render(model: Model, proof: Proof, known: dict[str, Invariant]) -> str:
    lemmas = ", ".join([*proof.lemmas, RANGES])
    lines = [f"prove {proof.invariant} with lemmas: {lemmas}", ""]
    if proof.verdict == PROVED:
        lines.append(f"  proved by {proof.k}-induction in {proof.seconds:.2f} s: it holds in every reachable state")
    elif proof.verdict == COUNTEREXAMPLE:
        lines.append(f"  counterexample: a real run violates {proof.failed} ({proof.seconds:.2f} s)")
        if proof.trace is not None:
            doc = known[proof.failed].doc if proof.failed in known else ""
            lines += ["", text.render(proof.trace, doc)]
        elif proof.reason:
            lines.append(f"  {proof.reason}")
    elif proof.verdict == NOT_INDUCTIVE:
        n = len(proof.cti) - 1
        lines.append(f"  not inductive for k = 1..{proof.k} ({proof.seconds:.2f} s); no run of fewer than "
                     f"{proof.k} step{'' if proof.k == 1 else 's'} violates it")
        lines.append(f"  counterexample to induction: {n} state{'' if n == 1 else 's'} satisfying the invariant and the lemmas, then a step "
                     f"to a state violating {proof.failed}; the states need not be reachable: a lemma that rules them "
                     f"out may make the proof go through")
        trace = Trace(model, [Step(i, s) for i, s in proof.cti], proof.failed)
        heading = [f"Counterexample to induction ({n} step{'' if n == 1 else 's'}) for {model.title()}"]
        lines += ["", text.render(trace, heading=heading)]
        lines += ["", f"State {n} (the bad successor), in full:"]
        described = model.describe(proof.cti[-1][1])
        width = max((len(key) for key in described), default=0)
        lines += [f"    {key:<{width}}  {value}" for key, value in described.items()]
    else:
        lines.append(f"  unknown: {proof.reason} (after {proof.seconds:.2f} s; --timeout gives more time)")
    return "\n".join(lines)


prove = ModelGroup("prove", make=make_prove,
                   help="Prove an invariant for every depth by k-induction with z3: kmc prove MODEL --invariant NAME.")
