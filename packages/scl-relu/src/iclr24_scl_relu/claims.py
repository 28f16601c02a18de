"""The paper's claims and the code's checks, computed from the metrics.

A claim is a statement of the paper measured against the strongest baseline, with its margin
stated against the seeds' standard error and the paper's own figure beside it; a check is
an invariant of the code. Neither is ever typed in: ``holds`` comes from the numbers.
"""

from __future__ import annotations

from iclr24_common import Check, Claim, Metrics


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    gap = metrics.gap("least_squares/test_mse", "ridge/test_mse")  # > 0: ridge is better
    return [
        Claim(
            id="beats-baseline",
            statement="TODO: the paper's statement (template: a tuned ridge penalty lowers the "
            "test error of least squares when features are as many as examples)",
            paper="TODO: the paper's figure, with its table number (or: none found, searched ...)",
            measured=f"test MSE ridge {metrics.fmt('ridge/test_mse')}, least squares "
            f"{metrics.fmt('least_squares/test_mse')}; gap {gap}",
            criterion="gap > 2 SE (paired over seeds)",
            holds=gap.beyond_noise(2.0),
        )
    ]


def make_checks(metrics: Metrics, preset) -> list[Check]:
    worst = max(metrics.values("ridge/stationarity"))
    return [
        Check(
            id="normal-equations",
            statement="the ridge solution satisfies its normal equations",
            measured=f"max |X^T (X w - y) + lam w| = {worst:.1e}",
            criterion="<= 1e-8 on every seed",
            holds=worst <= 1e-8,
        )
    ]
