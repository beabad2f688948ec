"""JUnit XML for CI systems: one <testcase> per gate check, a <failure> for each mismatch.

The layout is the one CI servers read (testsuites > testsuite > testcase > failure, with
tests/failures/errors/skipped/time counts); tests/junit.xsd states it and the tests
validate against it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime, timezone


@dataclass
class Case:
    name: str  # the check: the model's title
    classname: str  # kmc.gate.<model>
    seconds: float
    failure: str | None = None  # one-line message
    kind: str = ""  # "regression", "incomplete" or "stale"
    details: str = ""  # the trace or the differences


def dumps(suite: str, cases: list[Case]) -> str:
    failures = sum(1 for c in cases if c.failure is not None)
    total = f"{sum(c.seconds for c in cases):.3f}"
    root = ET.Element("testsuites", name="kmc gate", tests=str(len(cases)), failures=str(failures),
                      errors="0", time=total)
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(failures), errors="0",
                       skipped="0", time=total,
                       timestamp=datetime.now(timezone.utc).replace(microsecond=0, tzinfo=None).isoformat())
    for c in cases:
        tc = ET.SubElement(ts, "testcase", name=c.name, classname=c.classname, time=f"{c.seconds:.3f}")
        if c.failure is not None:
            failure = ET.SubElement(tc, "failure", message=c.failure, type=c.kind)
            failure.text = c.details
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
