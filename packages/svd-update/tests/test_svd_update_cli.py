"""Package-specific command-line behaviour (the common contract is tested in shared/tests):
the option errors. The paper preset's whole path on miniatures of every dataset in its real
format is tests/test_svd_update_paper_path.py."""

import pytest
from iclr24_svd_update.experiment import main


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["reproduce", "--device", "cuda"], "CPU only"),
        (["reproduce", "--preset", "paper"], "missing data"),
        (["reproduce", "--preset", "paper", "--dataset", "med"], "MED"),
        (["reproduce", "--preset", "smoke", "--n-batches", "0"], "n_batches must be >= 1"),
        (["reproduce", "--preset", "smoke", "--set", "batch_sizes=0"], "batch_sizes"),
    ],
)
def test_bad_input_exits_2(argv, msg, tmp_path, capsys):
    code = main([*argv, "--out", str(tmp_path / "run"), "--data-dir", str(tmp_path / "data")])
    assert code == 2
    assert msg in capsys.readouterr().err
