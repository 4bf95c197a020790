"""The advice A/B experiment: runs with and without the advice library, and its report."""
