"""`iclr24-opro reproduce ...`: argument parsing only (see experiment.py)."""

from __future__ import annotations

from iclr24_common import ReproduceApp

from . import __version__, experiment

app = ReproduceApp(
    package="iclr24-opro",
    version=__version__,
    paper=experiment.PAPER,
    presets=["smoke", "default", "paper"],
    run=experiment.run,
    add_arguments=experiment.add_arguments,
    default_seeds={"smoke": [0], "default": [0, 1, 2], "paper": [0, 1, 2, 3, 4]},
    uses_torch=False,
)


def main(argv=None) -> int:
    return app.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
