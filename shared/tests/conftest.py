"""Which packages the interruption test (test_resume.py) runs for. A CI leg whose package is
not one of them collects nothing from that file, rather than reporting skipped tests."""

import os

# Deterministic packages with several units and a cheap smoke preset. The mechanism is
# iclr24_common's and the same for every package; each case costs about 5 smoke runs, so one
# package runs it (aug-rkhs, which ran it too, has an interruption test of its own in its leg).
RESUME_PACKAGES = ("svd-update",)
_SELECTED = os.environ.get("ICLR24_PACKAGES", "").replace(",", " ").split() or RESUME_PACKAGES
RESUME_CASES = [p for p in RESUME_PACKAGES if p in _SELECTED]

collect_ignore = [] if RESUME_CASES else ["test_resume.py"]


def pytest_generate_tests(metafunc):
    if "resume_slug" in metafunc.fixturenames:
        metafunc.parametrize("resume_slug", RESUME_CASES)
