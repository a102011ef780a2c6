"""Privacy definitions: one module per definition, each defining its guarantee value type."""

from .approx import ApproxDP
from .approx_zcdp import ApproxZCDP
from .base import Conversion, Guarantee, ParameterValue
from .gdp import GDP
from .mcdp import MCDP
from .pure import PureDP
from .rdp import RDP, ApproxRDP
from .zcdp import ZCDP

__all__ = [
    "Guarantee",
    "Conversion",
    "ParameterValue",
    "PureDP",
    "ApproxDP",
    "RDP",
    "ApproxRDP",
    "ZCDP",
    "ApproxZCDP",
    "MCDP",
    "GDP",
]
