"""Adapters to the libraries ML engineers train with (optional; the core never imports them).

* :mod:`renyi.integrations.opacus` — ``PrivacyEngine(accountant="renyi")`` (``pip install
  renyi[opacus]``).
* :mod:`renyi.integrations.dp_accounting` — a dp-accounting ``PrivacyAccountant`` and
  ``DpEvent`` reader, for JAX and TensorFlow Privacy users (``pip install renyi[dp-accounting]``).
"""
