"""The JTC paper (Din et al. 2023): its figures, early exit, sub-module shortcuts, claims and exercises. The base the
three related papers compare against.
"""
