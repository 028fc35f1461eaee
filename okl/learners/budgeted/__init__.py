"""Kernel expansions under a budget (polk_koppel2019): FSGD, POLK (FSGD + destructive KOMP) and BSGD."""
