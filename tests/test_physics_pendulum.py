"""Small-angle physical pendulum: the period of the linearised equation.

The rod of conftest (1 kg box 0.04 x 0.04 x 1.0 m, centre d = 0.5 m from the pivot) on a
frictionless revolute joint about +y. I_pivot th'' = -m g d sin th, so for small th
    T0 = 2 pi sqrt(I_pivot / (m g d)),   I_pivot = m (a^2 + c^2) / 3 + m d^2 = 0.333467 kg m^2
(a = 0.02, c = 0.5 the half extents across the axis). At amplitude 0.05 rad the exact period
is longer by ~th0^2 / 16 = 1.6e-4 and semi-implicit Euler changes the frequency by
~(w dt)^2 / 24 < 1e-5: both far inside the 0.5 % allowed.
"""
import math

import numpy as np
import pytest
from conftest import ROD_D, ROD_I_PIVOT, ROD_MASS, G, rod_pendulum

AMPLITUDE = 0.05


@pytest.mark.parametrize("hz", [240, 1000])
def test_small_angle_pendulum_period_matches_2pi_sqrt_I_over_mgd(hz):
    assert ROD_I_PIVOT == pytest.approx((0.02 ** 2 + 0.5 ** 2) / 3 + 0.25)
    t0 = 2 * math.pi * math.sqrt(ROD_I_PIVOT / (ROD_MASS * G * ROD_D))
    # start at rest turned -0.05 rad about +y; the joint angle is zero there, so the
    # hanging equilibrium is at joint angle +0.05
    world = rod_pendulum("revolute", tilt=-AMPLITUDE, dt=1.0 / hz)
    rec = world.run(int(round(8 * t0 * hz)))
    x = rec.joint[:, 0, 0] - AMPLITUDE
    t = rec.t
    up = np.where((x[:-1] < 0.0) & (x[1:] >= 0.0))[0]
    crossings = t[up] + (t[up + 1] - t[up]) * (-x[up]) / (x[up + 1] - x[up])
    assert len(crossings) >= 6
    period = (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    assert abs(period / t0 - 1.0) < 0.005, (period, t0)
    # it is a swing of amplitude 0.05 about the equilibrium
    assert np.max(x) == pytest.approx(AMPLITUDE, rel=0.05)
