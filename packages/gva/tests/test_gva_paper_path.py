"""The ``paper`` preset end to end (issue 41): it generates its environments and reads the LM
text that ships with CPython, so no files are written; ``--set`` caps only sizes (updates,
evaluation episodes, LM steps, one seed). The LM is built at the paper preset's width,
depth and context (128, 4, 128)."""

from iclr24_gva.experiment import PRESETS, app

from iclr24_common.testing import run_paper_preset

SIZE_CAPS = {
    "seeds": "0",  # one seed (paper preset: five)
    "eval_every": 2,  # first: each --set is validated in turn (>= 4 checkpoints per run)
    "steps": 8,  # BC updates per config (paper preset: 20,000)
    "pendulum.steps": 8,
    "cartpole.steps": 8,
    "plateau_block": 2,  # checkpoints per plateau block (paper preset: 10)
    "window": 4,  # checkpoints of the measured window (paper preset: 20)
    "n_demos": 8,
    "n_eval": 4,  # evaluation episodes (paper preset: 1024)
    "horizon": 10,
    "large_batch": 64,  # the large-batch config's batch (paper preset: 512)
    "lm_eval_every": 2,
    "lm_steps": 8,  # LM steps (paper preset: 10,000)
    "lm_batch": 4,
}


def test_gva_paper_path_runs_with_size_caps(tmp_path):
    paper = PRESETS["paper"]
    assert (paper.lm_dim, paper.lm_layers, paper.lm_context) == (128, 4, 128)
    res = run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets=SIZE_CAPS)
    ids = {c["id"] for c in res["claims"]}
    assert ids, "no claims"
    names = set(res["metrics"])
    assert any(n.startswith("lm/") for n in names) and any(n.startswith("pendulum/") for n in names)
    assert any(n.startswith("cartpole/second_floor/") for n in names)
    assert "cartpole/gva-exists" in ids
