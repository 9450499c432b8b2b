"""The checks lesson references share: each decimal a lesson's text quotes is a value the
lesson computes, to the decimals quoted (signed decimals not glued to a word, as
attention::quotes::quoted_numbers in the tutor reads them); and each whole printed figure
of [expected] is the exact matrix correctly rounded."""

import re

import numpy as np


def check_quotes(texts, values, decimals=None):
    """Asserts every decimal quoted in `texts` (a dict of name -> text, each at most 2000
    characters) rounds from one of `values`; with `decimals`, that it is written to exactly
    that many. Returns how many were checked."""
    count = 0
    for name, text in texts.items():
        assert len(text) <= 2000, f"{name}: {len(text)} characters"
        for quoted in re.findall(r"(?<![\w.])-?\d+\.\d+(?![\w])", text):
            places = len(quoted.split(".")[1])
            half = 0.5 * 10.0**-places * (1 + 1e-9)
            assert np.any(np.abs(values - float(quoted)) <= half), f"{name} quotes {quoted}"
            if decimals is not None:
                assert places == decimals, f"{name}: {quoted} is not at the lesson's decimals"
            count += 1
    return count


def check_expected(lesson, a):
    """Every printed figure is the exact value correctly rounded (default tolerance)."""
    tolerance = 0.5 * 10.0 ** -lesson["decimals"] * (1 + 1e-9)
    count = 0
    for name, printed in lesson["expected"].items():
        printed = np.array(printed, float)
        assert printed.shape == a[name].shape, (name, printed.shape, a[name].shape)
        assert np.all(np.abs(a[name] - printed) <= tolerance), (name, a[name], printed)
        count += printed.size
    return count
