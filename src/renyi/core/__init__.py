"""The kernel every layer stands on: log-space arithmetic, parameter domains, errors, values,
number formatting that never understates a loss, and the one hook (no renyi imports).
"""
