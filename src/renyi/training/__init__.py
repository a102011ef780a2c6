"""Adapters to training code: dp-accounting events and the Opacus and dp-accounting integrations."""
