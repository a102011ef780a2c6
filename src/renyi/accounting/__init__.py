"""Turning compositions into numbers: the route list (exact, PLD, RDP, zCDP), the PLD engine,
calibration, the DP-SGD solvers, accuracy and limits.
"""
