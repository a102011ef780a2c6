"""Transformers of mechanisms by how examples are sampled: Poisson and without-replacement
subsampling, random allocation, truncation, tuning, and the batch index generators.
"""
