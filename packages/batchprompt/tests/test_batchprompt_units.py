"""The run's units (issue 52): module-level partials that pickle, the slowest declared first
(that they give the local run's numbers on Ray is the contract test's)."""

import pickle

from iclr24_batchprompt.experiment import PRESETS, unit_jobs


def test_units_pickle_and_the_slowest_come_first(tmp_path):
    preset = PRESETS["default"]
    jobs = unit_jobs(preset, tmp_path, preset.seeds, "cpu")
    # per seed: BPE at bs 4 and 16, SEAS by both rules at 16, SinglePrompt, the simulator twice
    assert len(jobs) == 3 * 7
    keys = list(jobs)
    assert keys[:3] == ["seed0/llm/bs4", "seed1/llm/bs4", "seed2/llm/bs4"]
    assert keys.index("seed2/llm/bs16/seas-official") < keys.index("seed0/llm/bs1")
    assert keys[-1] == "seed2/sim/seas-official"
    assert pickle.loads(pickle.dumps(jobs)).keys() == jobs.keys()
