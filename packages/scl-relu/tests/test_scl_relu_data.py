"""The real loader on a small file written by the test; its error when the file is absent."""

import numpy as np
import pytest

from iclr24_common import MissingDataError
from iclr24_scl_relu import load_csv


def test_load_csv_reads_features_and_target(tmp_path):
    folder = tmp_path / "scl-relu"
    folder.mkdir()
    (folder / "train.csv").write_text("1,2,3\n4,5,6\n")
    X, y = load_csv(tmp_path)
    np.testing.assert_array_equal(X, [[1, 2], [4, 5]])
    np.testing.assert_array_equal(y, [3, 6])


def test_missing_file_says_where_and_how(tmp_path):
    with pytest.raises(MissingDataError, match="train.csv"):
        load_csv(tmp_path)
