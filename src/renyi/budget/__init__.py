"""Budgets held as state: the accountant, its filters and its durable ledger."""
