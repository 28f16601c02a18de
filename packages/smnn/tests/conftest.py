import pytest
import torch


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """The networks here are tiny: one thread avoids oversubscribing a shared CPU. Restored
    afterwards so other packages' tests in the same session are unaffected."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
