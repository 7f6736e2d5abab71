#!/usr/bin/env python3
"""The slowest suites and tests of a `swift test` run, from the runner's own timings.

Usage: scripts/test-times.py CONSOLE_LOG [XUNIT_XML...] [--top N]

CONSOLE_LOG is what `swift test` printed (Swift Testing ends each suite and test with
"... passed after N seconds"); each XUNIT_XML is a file `swift test --xunit-output` wrote
(Swift Testing's has every test case with its suite and time). Suites are listed by their
wall time (from first test started to last ended, as the runner prints it: suites overlap,
so the times add up to more than the run); tests by their own time. scripts/test.sh prints
this at the end of every run.
"""

import re
import sys
import xml.etree.ElementTree as ElementTree

ENDED = re.compile(r"(Suite|Test) (.+?) (passed|failed) after ([0-9.]+) seconds")


def console_times(path):
    suites, tests = [], []
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            match = ENDED.search(line)
            if not match:
                continue
            kind, name, verdict, seconds = match.groups()
            if kind == "Test" and name.startswith("run with "):
                continue  # the whole run's line
            entry = (float(seconds), name.strip(), verdict)
            (suites if kind == "Suite" else tests).append(entry)
    return suites, tests


def xunit_tests(paths):
    tests = []
    for path in paths:
        try:
            root = ElementTree.parse(path).getroot()
        except (OSError, ElementTree.ParseError) as error:
            print(f"test-times: {path}: {error}", file=sys.stderr)
            continue
        for case in root.iter("testcase"):
            failed = case.find("failure") is not None or case.find("error") is not None
            name = f"{case.get('classname', '')}/{case.get('name', '')}"
            tests.append((float(case.get("time", "0") or 0), name, "failed" if failed else "passed"))
    return tests


def main(arguments):
    top = 15
    if "--top" in arguments:
        index = arguments.index("--top")
        top = int(arguments[index + 1])
        del arguments[index : index + 2]
    if not arguments:
        print(__doc__, file=sys.stderr)
        return 64
    suites, tests = console_times(arguments[0])
    from_xunit = xunit_tests(arguments[1:])
    if from_xunit:
        tests = from_xunit
    # One line per name: a parameterized test's cases in xunit become one test.
    totals = {}
    for seconds, name, verdict in tests:
        old = totals.get(name, (0.0, "passed"))
        totals[name] = (old[0] + seconds, "failed" if "failed" in (old[1], verdict) else "passed")
    print(f"Slowest suites (wall time, of {len(suites)}; suites overlap):")
    for seconds, name, verdict in sorted(suites, reverse=True)[:top]:
        print(f"  {seconds:8.1f} s  {name}{'  (FAILED)' if verdict == 'failed' else ''}")
    print(f"Slowest tests (of {len(totals)}; parameterized cases added up):")
    for name, (seconds, verdict) in sorted(totals.items(), key=lambda item: -item[1][0])[:top]:
        print(f"  {seconds:8.1f} s  {name}{'  (FAILED)' if verdict == 'failed' else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
