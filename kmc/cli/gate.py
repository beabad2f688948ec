"""`kmc gate BASELINE.toml`: run every check of a baseline and compare with its verdicts
(kmc/gate/compare.py).

Exit 0 when everything matches; 12 when an invariant the baseline says holds is violated
(a protocol regression: its counterexample is printed); 4 when a check's limits left an
invariant undecided (and it does not say incomplete_ok); 3 when the baseline is stale (a
violation disappeared, a shortest trace or a state count changed: the protocol changed,
so review it and rewrite the baseline with `--update`). The first of these that any check
gives is the gate's (kmc/exits.py). `--junit FILE` writes one JUnit test case per check.
"""

from __future__ import annotations

from pathlib import Path

import click

from kmc.cli.config import config_option
from kmc.cli.output import check_writable, write_atomic
from kmc.cli.progress import ProgressPrinter
from kmc.api import able
from kmc.gate import baseline as bl
from kmc.gate import junit
from kmc import exits
from kmc.gate.compare import SEVERITY, Outcome, run_check
from kmc.traces import text


@click.command("gate")
@click.argument("baseline_path", metavar="BASELINE.toml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="FILE", help="write JUnit XML: one test case per check")
@click.option("--update", is_flag=True, help="rewrite the baseline with the verdicts and counts found now")
@click.option("--engine", type=click.Choice(able("check")), default=None,
              help="run every check with this engine instead of the baseline's")
@click.option("--quiet", "-q", is_flag=True, help="no progress on stderr")
@config_option
def gate(baseline_path: Path, junit_path: Path | None, update: bool, engine: str | None, quiet: bool) -> int:
    """Run a baseline's checks and compare with its expected verdicts (exit 0, 12, 4 or 3)."""
    if junit_path is not None:
        check_writable(junit_path, "--junit")
    if update:
        check_writable(baseline_path, "--update")
    base = bl.load(baseline_path)
    cases: list[junit.Case] = []
    outcomes: list[Outcome] = []
    for check in base.checks:
        printer = ProgressPrinter(f"{check.model} {check.settings.get('mode', '')}", quiet=quiet)
        try:
            out = run_check(check, engine, printer)
        finally:
            printer.done()
        outcomes.append(out)
        cases.append(_report(out))
    codes = {o.exit_code for o in outcomes}
    worst = next(code for code in SEVERITY if code in codes)
    failed = sum(1 for c in cases if c.failure is not None)
    if not update:
        click.echo(f"{len(cases) - failed} of {len(cases)} checks match {baseline_path}")
        if worst == exits.INCOMPLETE:
            click.echo("a check is incomplete: raise its limits, or say incomplete_ok = true in it")
        if worst == exits.STALE:
            click.echo(f"the baseline is stale: review the changes, then run kmc gate {baseline_path} --update")
    # the files last: the verdicts are printed whatever happens to them
    if junit_path is not None:
        write_atomic(junit_path, junit.dumps(str(baseline_path), cases), "--junit")
    if update:
        fresh = [bl.updated(o.check, o.result) for o in outcomes]
        write_atomic(baseline_path, bl.dumps(bl.Baseline(baseline_path, fresh, base.text)), "--update")
        click.echo(f"{baseline_path}: rewritten with the verdicts and counts of this run ({failed} checks changed)")
        return exits.OK
    return worst


def _report(out: Outcome) -> junit.Case:
    """Print one check's line (and a regression's traces); its JUnit test case."""
    title = out.model.title()
    case = junit.Case(title, f"kmc.gate.{out.check.model}", out.seconds)
    if out.regressions:
        traces = [text.render(out.result.invariants[i.name].trace, i.doc)  # type: ignore[arg-type]
                  for i in out.regressed()]
        case.failure, case.kind, case.details = "; ".join(out.regressions), "regression", "\n\n".join(traces)
        click.echo(f"FAIL   {title}")
        for line in [*out.regressions, *([out.incomplete] if out.incomplete else []), *out.stale]:
            click.echo(f"       {line}")
        for trace in traces:
            click.echo("")
            click.echo(trace)
            click.echo("")
    elif out.incomplete:
        lines = [out.incomplete, *out.stale]
        case.failure, case.kind, case.details = out.incomplete, "incomplete", "\n".join(lines)
        click.echo(f"INCOMPLETE {title}")
        for line in lines:
            click.echo(f"       {line}")
    elif out.stale:
        case.failure, case.kind, case.details = "; ".join(out.stale), "stale", "\n".join(out.stale)
        click.echo(f"STALE  {title}")
        for line in out.stale:
            click.echo(f"       {line}")
    else:
        partial = "" if out.result.complete else f", stopped by {out.result.stopped_by}: incomplete_ok"
        click.echo(f"ok     {title}  ({out.result.distinct_states:,} states, {out.seconds:.2f} s{partial})")
    return case
