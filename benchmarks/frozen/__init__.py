"""The sanitizer as it was at commit efd2560 (before issue 18), frozen verbatim.

Only ``benchmarks/sanitizer.py`` imports it: to time today's rules beside these in the same run,
and to measure the recall these had on today's corpus. Never imported by the product.
"""
