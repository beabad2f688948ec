"""`kmc gate BASELINE.toml`: run every check of a baseline and compare with its verdicts.

Exit 0 when everything matches; 12 when an invariant the baseline says holds is violated
(a protocol regression: its counterexample is printed); 3 when the baseline is stale (a
violation disappeared, a shortest trace or a state count changed: the protocol changed,
so review it and rewrite the baseline with `--update`). `--junit FILE` writes one JUnit
test case per check. Every check runs with --continue, so each invariant gets its own
verdict and shortest trace, and state counts are those of the complete graph.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from kmc import registry
from kmc.engines import run as engines
from kmc.engines.result import CheckResult
from kmc.engines.search import Limits
from kmc.cli import baseline as bl
from kmc.cli import junit
from kmc.cli.config import config_option
from kmc.cli.output import write_atomic
from kmc.cli.progress import run_with_progress
from kmc.traces import text

EXIT_OK, EXIT_REGRESSION, EXIT_STALE = 0, 12, 3


def compare(check: bl.Check, result: CheckResult) -> tuple[list[str], list[str]]:
    """(regressions, stale differences) between a check's expectations and a run."""
    regressions: list[str] = []
    stale: list[str] = []
    for name, verdict in result.invariants.items():
        want = check.expect.get(name)
        seen = bl.Expected.of(verdict)
        shown = "not decided" if seen is None else seen.text()
        if want is None:
            stale.append(f"{name}: {shown}, not in the baseline")
        elif want.holds and verdict.holds is False and not verdict.report:
            regressions.append(f"{name}: expected to hold, VIOLATED ({verdict.trace.length} steps)")  # type: ignore[union-attr]
        elif seen is None or seen != want:
            stale.append(f"{name}: expected {want.text()}, now {shown}")
    if check.states is not None and result.distinct_states != check.states:
        stale.append(f"distinct states: expected {check.states:,}, now {result.distinct_states:,}")
    if not result.complete and result.stopped_by != "violation":
        stale.append(f"the run is incomplete (stopped by {result.stopped_by})")
    return regressions, stale


@click.command("gate")
@click.argument("baseline_path", metavar="BASELINE.toml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="FILE", help="write JUnit XML: one test case per check")
@click.option("--update", is_flag=True, help="rewrite the baseline with the verdicts and counts found now")
@click.option("--engine", type=click.Choice(list(engines.ENGINES)), default=None,
              help="run every check with this engine instead of the baseline's")
@click.option("--quiet", "-q", is_flag=True, help="no progress on stderr")
@config_option
def gate(baseline_path: Path, junit_path: Path | None, update: bool, engine: str | None, quiet: bool) -> int:
    """Run a baseline's checks and compare with its expected verdicts (exit 0, 12 or 3)."""
    base = bl.load(baseline_path)
    cases: list[junit.Case] = []
    fresh: list[bl.Check] = []
    worst = EXIT_OK
    for check in base.checks:
        model, invariants = registry.build(check.model, **check.settings)
        chosen = registry.select(invariants, list(check.expect) or None)
        started = time.perf_counter()
        result = run_with_progress(engine or check.engine, model, chosen,
                                   Limits(keep_going=True, symmetry=check.symmetry), quiet=quiet)
        seconds = time.perf_counter() - started
        regressions, stale = compare(check, result)
        fresh.append(bl.updated(check, result))
        title = model.title()
        case = junit.Case(title, f"kmc.gate.{check.model}", seconds)
        if regressions:
            worst = EXIT_REGRESSION
            docs = {i.name: i.doc for i in chosen}
            traces = [text.render(result.invariants[n.split(":")[0]].trace, docs[n.split(":")[0]])  # type: ignore[arg-type]
                      for n in regressions]
            case.failure, case.kind, case.details = "; ".join(regressions), "regression", "\n\n".join(traces)
            click.echo(f"FAIL   {title}")
            for line in regressions + stale:
                click.echo(f"       {line}")
            for trace in traces:
                click.echo("")
                click.echo(trace)
                click.echo("")
        elif stale:
            worst = max(worst, EXIT_STALE) if worst != EXIT_REGRESSION else worst
            case.failure, case.kind, case.details = "; ".join(stale), "stale", "\n".join(stale)
            click.echo(f"STALE  {title}")
            for line in stale:
                click.echo(f"       {line}")
        else:
            click.echo(f"ok     {title}  ({result.distinct_states:,} states, {seconds:.2f} s)")
        cases.append(case)
    if junit_path is not None:
        write_atomic(junit_path, junit.dumps(str(baseline_path), cases))
    failed = sum(1 for c in cases if c.failure is not None)
    if update:
        write_atomic(baseline_path, bl.dumps(bl.Baseline(baseline_path, fresh, base.header)))
        click.echo(f"{baseline_path}: rewritten with the verdicts and counts of this run ({failed} checks changed)")
        return EXIT_OK
    click.echo(f"{len(cases) - failed} of {len(cases)} checks match {baseline_path}")
    if worst == EXIT_STALE:
        click.echo(f"the baseline is stale: review the changes, then run kmc gate {baseline_path} --update")
    return worst
