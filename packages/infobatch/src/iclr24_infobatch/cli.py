"""``iclr24-infobatch reproduce``: argument parsing only; the work is in experiment.py."""

from __future__ import annotations

from iclr24_common import ReproduceApp

from . import __version__, experiment

app = ReproduceApp(
    package="iclr24-infobatch",
    version=__version__,
    paper=experiment.PAPER,
    presets=["smoke", "default", "paper"],
    run=experiment.run,
    add_arguments=experiment.add_arguments,
    default_seeds={name: p.seeds for name, p in experiment.PRESETS.items()},
)


def main(argv=None) -> int:
    return app.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
