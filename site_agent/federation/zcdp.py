"""Zero-concentrated differential privacy (zCDP, Bun and Steinke 2016), the accounting of the
site's evaluation noise.

A Gaussian release of sensitivity ``s`` with noise of standard deviation ``sd`` is
``s**2 / (2 * sd**2)``-zCDP; zCDP spends add up over releases, adaptive ones included; a total
of ``rho`` gives (``rho + 2 * sqrt(rho * ln(1 / delta))``, ``delta``)-differential privacy.
"""

from __future__ import annotations

import math


def rho_of(epsilon: float, delta: float) -> float:
    """The largest zCDP ``rho`` that still gives (``epsilon``, ``delta``)-DP."""
    log_term = math.log(1 / delta)
    return (math.sqrt(log_term + epsilon) - math.sqrt(log_term)) ** 2


def epsilon_of(rho: float, delta: float) -> float:
    """The epsilon (at ``delta``) a total zCDP spend of ``rho`` gives."""
    return rho + 2 * math.sqrt(rho * math.log(1 / delta)) if rho > 0 else 0.0


def gaussian_sd(sensitivity: float, rho: float) -> float:
    """The noise standard deviation that makes one release of ``sensitivity`` cost ``rho``."""
    return sensitivity / math.sqrt(2 * rho)
