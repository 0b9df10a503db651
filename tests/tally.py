"""tally.py: the checks the Python test scripts share. check() counts a
check that holds and keeps the message of one that fails (its detail cut to
`keep` characters, its end rather than its start with tail); finish()
prints the failures (to `stream`, standard output by default), then the
closing `N passed, N failed` line, and exits 1 when any failed. Scripts may also
append a message to `failures` themselves."""
import sys

failures = []
_passed = 0


def check(name, cond, detail="", keep=300, tail=False):
    global _passed
    if cond:
        _passed += 1
    else:
        d = str(detail)
        failures.append(f"{name}: {d[-keep:] if tail else d[:keep]}")
    return cond


def finish(stream=None):
    for f in failures:
        print("FAIL", f, file=stream or sys.stdout)
    print(f"{_passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
