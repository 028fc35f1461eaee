"""Data-adaptive dictionaries: KORS (online ridge-leverage-score sampling) and the Nyström embedding
of a dictionary's span."""
