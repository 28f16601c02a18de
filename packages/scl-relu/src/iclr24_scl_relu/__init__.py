"""TODO: the paper's title (authors, ICLR 2024), https://arxiv.org/abs/0000.00000

TODO: one line on what the package gives a user. (Template example: ridge regression.)
"""

from .baselines import least_squares_fit
from .data import load_csv, make_regression
from .scl_relu import ridge_fit, ridge_predict

__version__ = "0.1.0"

__all__ = ["least_squares_fit", "load_csv", "make_regression", "ridge_fit", "ridge_predict"]
