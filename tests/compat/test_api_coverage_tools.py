"""The coverage table's scanner and probe (tools/api_scan.py, tools/api_probe.py) on known input."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import api_probe  # noqa: E402
import api_scan  # noqa: E402

TENSOR_NAMES = frozenset(name for name in dir(torch.Tensor) if not name.startswith("_"))

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.nn import Linear

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = Linear(3, 2, bias=False)

    def forward(self, x):
        return F.relu(self.fc(x)).sum(dim=1)

opt = optim.SGD([], lr=0.1)
words = "a b".split()
y = torch.zeros(2, requires_grad=True).cumsum(0)
print(y.shape)
'''


def test_the_scanner_resolves_aliases_keywords_and_tensor_methods():
    usage = api_scan.Usage()
    api_scan.scan_source(usage, "x.py", SOURCE, TENSOR_NAMES)
    expected = {
        "torch.nn.Module", "torch.nn.Linear", "torch.nn.Linear(bias=)",
        "torch.nn.functional.relu", "torch.optim.SGD", "torch.optim.SGD(lr=)",
        "torch.zeros", "torch.zeros(requires_grad=)", "Tensor.sum", "Tensor.sum(dim=)",
        "Tensor.cumsum", "Tensor.shape",
    }
    assert expected <= set(usage.count), expected - set(usage.count)
    assert "Tensor.split" not in usage.count  # str.split is one of Python's own methods
    assert usage.files["torch.nn.Linear"] == {"x.py"}


def test_d2l_cells_of_other_frameworks_are_left_out():
    markdown = (
        "```{.python .input}\n%%tab mxnet\nfrom mxnet import np\nnp.ones(2)\n```\n"
        "```{.python .input}\n%%tab pytorch\nimport torch\ntorch.ones(2)\n```\n"
        "```{.python .input}\n%%tab all\nx = 1\n```\n"
    )
    cells = api_scan.d2l_pytorch_cells(markdown)
    assert [cell.strip() for cell in cells] == ["import torch\ntorch.ones(2)", "x = 1"]


def test_the_probe_sees_a_signature_gap_and_a_wrong_result():
    def narrow_sum(input, dim):  # no keepdim, dim required
        return torch.sum(input, dim)

    gaps, _ = api_probe.signature_gaps(torch.nn.functional.softmax, narrow_sum, "F.softmax")
    assert gaps  # softmax's (input, dim=None, _stacklevel=3, dtype=None) is not met
    import whylab

    assert api_probe.behaviour("torch.exp", torch.exp, whylab.exp) == "same"
    assert api_probe.behaviour("torch.exp", torch.exp, whylab.sin).startswith("differs")
    assert api_probe.signature_gaps(torch.cumsum, whylab.cumsum, "torch.cumsum")[0] == []
