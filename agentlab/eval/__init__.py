"""Evaluation: benchmark task lists and metrics."""
