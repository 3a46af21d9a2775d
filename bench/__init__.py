"""Benchmarks: run by hand (see README.md), never part of the test suite's timing."""
