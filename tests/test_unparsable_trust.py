"""Issue 44 (an older kind): every program unparsable, with skip_unparsable=True, is a clear error
that counts the unparsable rows, not a raw pyarrow AttributeError."""

from __future__ import annotations

import pytest
from datasets import Dataset

from hf_synthsample.sampling.structural import CMaxEntSampler, UATSampler


@pytest.mark.parametrize("sampler", [UATSampler, CMaxEntSampler])
def test_every_program_unparsable_is_a_clear_error(sampler):
    ds = Dataset.from_dict({"program": ["((( bad", ")) worse", "(( x"] * 4})
    with pytest.raises(ValueError, match=r"0 rows that can be sampled \(12 unparsable rows"):
        sampler(language="sexpr", skip_unparsable=True, seed=0).indices(ds, 3)


def test_every_program_unparsable_in_a_split_is_a_clear_error():
    from hf_synthsample.splits import mcd_split

    ds = Dataset.from_dict({"program": ["((( bad", ")) worse", "(( x"] * 4})
    with pytest.raises(ValueError, match="no row has a structure"):
        mcd_split(ds, column="program", language="sexpr", skip_unparsable=True)
