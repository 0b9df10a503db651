"""tally.py: the checks the Python test scripts share. check() counts a
check that holds and keeps the message of one that fails (its detail cut to
300 characters); finish() prints the failures, then the closing
`N passed, N failed` line, and exits 1 when any failed. Scripts may also
append a message to `failures` themselves."""
import sys

failures = []
_passed = 0


def check(name, cond, detail=""):
    global _passed
    if cond:
        _passed += 1
    else:
        failures.append(f"{name}: {str(detail)[:300]}")
    return cond


def finish():
    for f in failures:
        print("FAIL", f)
    print(f"{_passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
