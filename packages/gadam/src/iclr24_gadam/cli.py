"""Command line: `iclr24-gadam reproduce ...` (argument parsing only)."""

from iclr24_common import ReproduceApp

from . import __version__, experiment

app = ReproduceApp(
    package="iclr24-gadam",
    version=__version__,
    paper=experiment.PAPER,
    presets=list(experiment.PRESETS),
    run=experiment.run,
    add_arguments=experiment.add_arguments,
    default_seeds={"smoke": [0], "default": [0, 1, 2, 3, 4], "paper": [0, 1, 2, 3, 4]},
)


def main(argv=None) -> int:
    return app.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
