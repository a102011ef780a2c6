"""The engines a release can run on, by the name a spec gives (``[engine] name``).

``"duckdb"`` (:class:`~renyi.release.duckdb.DuckDBEngine`, embedded, the default) and
``"spark"`` (:class:`~renyi.release.spark.SparkEngine`). Each module imports its library only
when an engine is opened, so ``import renyi`` never imports DuckDB or PySpark.
"""

from __future__ import annotations

from typing import Any

from renyi.release.spec import DataSpec, ReleaseSpec

__all__ = ["open_engine"]


def open_engine(spec: ReleaseSpec, data: DataSpec | None = None) -> Any:
    """The engine a spec names (``[engine] name``), opened on its source (or on ``data``).

    Raises:
        SpecError: the source cannot be opened, the engine's library is missing, a Spark
            session cannot start or its master does not answer (before anything is spent).
    """
    data = spec.data if data is None else data
    if spec.engine == "spark":
        from renyi.release.spark import SparkEngine

        return SparkEngine(data, master=spec.master, conf=dict(spec.engine_conf), memory_limit=spec.memory_limit,
                           threads=spec.threads, start_timeout=spec.start_timeout)
    from renyi.release.duckdb import DuckDBEngine

    return DuckDBEngine(data, memory_limit=spec.memory_limit, threads=spec.threads)
