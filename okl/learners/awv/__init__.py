"""Aggregating-weights forecasters (Vovk–Azoury–Warmuth) and their ridge twins: exact Kernel-AWV and
online KRR, and PKAWV/PKRR on the Taylor basis (pkawv_jezequel2019 §2, §3.1)."""
