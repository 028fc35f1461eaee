"""Learners on the Nyström span of a dictionary: PKAWV/PKRR on a KORS dictionary (pkawv_jezequel2019
§3.2), the beforehand-dictionary variant, and NOGD (gradient descent on the first J points' embedding)."""
