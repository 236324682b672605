"""torch.export Dims through brt.compile_torch: a Dim's min and max become
the symbol's constraints, checked at run time with errors naming them."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import brt  # noqa: E402


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(6, 4)

    def forward(self, x):
        return torch.tanh(self.linear(x)) * x.shape[0]


def test_dim_min_and_max_are_constraints(have_compiler, tmp_path):
    torch.manual_seed(3)
    model = Scaled().eval()
    batch = torch.export.Dim("b", min=2, max=16)
    path = brt.compile_torch(model, torch.randn(4, 6), dynamic_shapes=({0: batch},),
                             path=tmp_path / "scaled.brtx")
    session = brt.Session(path)
    rng = np.random.default_rng(4)
    for rows in (2, 7, 16):
        x = rng.standard_normal((rows, 6)).astype(np.float32)
        (got,) = session.run(x)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for rows, relation in ((1, "b >= 2"), (17, "b <= 16")):
        with pytest.raises(Exception, match=relation):
            session.run(rng.standard_normal((rows, 6)).astype(np.float32))
