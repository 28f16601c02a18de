"""The paper preset end to end on miniature CIFAR-10 and CIFAR-100 in the real on-disk format.

The miniatures are the python-2 pickles of the real archives, written by
``iclr24_common.testing`` (cifar-10-batches-py/data_batch_1..5 and test_batch with data
(N, 3072) uint8, labels, batch_label, filenames, plus batches.meta; cifar-100-python/train and
test with fine_labels and coarse_labels, plus meta), under ``<data-dir>/infobatch/``. The run is
the real ``reproduce --preset paper`` (ResNet-18 SGD on CIFAR-10, ResNet-50 LARS on CIFAR-100, augmentation, OneCycle, every method, the
interleaved timing) with only sizes reduced: 8 images per training batch file (40 train, 20 test
for CIFAR-10; 48 / 24 for CIFAR-100), 3 epochs instead of 200 (epoch 0 unscored, epoch 1 pruned,
epoch 2 annealed), the ResNets' width 4 instead of 64 (the paper's ResNets do not train on CPU in
seconds), 1 seed.
"""

from iclr24_infobatch.experiment import app

from iclr24_common.testing import run_paper_preset, write_cifar10, write_cifar100


def test_paper_preset_runs_on_miniature_cifar(tmp_path):
    data = tmp_path / "data"
    write_cifar10(data / "infobatch" / "cifar-10-batches-py", n_per_batch=8, n_test=20)
    write_cifar100(data / "infobatch" / "cifar-100-python", n_train=48, n_test=24)
    res = run_paper_preset(app, data, tmp_path / "run",
                           sets={"epochs": 3, "resnet_width": 4})  # fmt: skip
    ids = {c["id"] for c in res["claims"]}
    assert ids == {"lossless/cifar10", "saves-cost/cifar10", "wall-clock/cifar10",
                   "beats-random/cifar10", "beats-hard/cifar10", "lossless/cifar100",
                   "saves-cost/cifar100", "beats-random/cifar100", "beats-hard/cifar100"}  # fmt: skip
    assert all(c["holds"] for c in res["checks"]), [c for c in res["checks"] if not c["holds"]]
    tasks = res["tasks"]
    assert tasks["cifar10"]["model"] == "resnet18" and tasks["cifar100"]["model"] == "resnet50"
    assert tasks["cifar100"]["train"]["optimizer"] == "lars"
    assert tasks["cifar100"]["train"]["batch_size"] == 256 and tasks["cifar10"]["train"]["augment"]
    assert res["tuning"] == {"cifar10": {}, "cifar100": {}}  # the official lrs, untuned
    assert res["metrics"]["cifar10/full/max_lr"]["mean"] == 0.05
    assert res["metrics"]["cifar100/full/max_lr"]["mean"] == 5.2
    assert res["config"]["epochs"] == 3 and res["config"]["datasets"] == ["cifar10", "cifar100"]
    # the timing ran its 2 repeats on the first dataset; the pruned epoch saved passes
    assert len(res["metrics"]["cifar10/interleaved/time_ratio"]["per_seed"]) == 2
    assert res["metrics"]["cifar10/infobatch_r0.5/saved_fraction"]["mean"] > 0
