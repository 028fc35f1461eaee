"""Second-order (online Newton step) kernel learners: KONS, Sketched-KONS
(sketched_kons_calandriello2017), PROS-N-KONS, CON-KONS, B-KONS and the BATCH comparator
(pros_n_kons_calandriello2017)."""
