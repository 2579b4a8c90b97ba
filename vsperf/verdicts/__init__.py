"""Consumers of result files that decide: compare (regressions), criteria, matrix, xunit."""
