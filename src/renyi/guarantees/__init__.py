"""Privacy definitions: one module per definition, each defining its guarantee value type."""

from renyi.guarantees.approx import ApproxDP
from renyi.guarantees.approx_zcdp import ApproxZCDP
from renyi.guarantees.base import Conversion, Guarantee, ParameterValue
from renyi.guarantees.gdp import GDP
from renyi.guarantees.mcdp import MCDP
from renyi.guarantees.pure import PureDP
from renyi.guarantees.rdp import RDP, ApproxRDP
from renyi.guarantees.zcdp import ZCDP

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
