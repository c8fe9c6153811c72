"""Two-reviewer double-blind review under KINA's bonus-on-bar tournament (KINA 3.2, 4.1, Appendix C, 5.3).

Pure core: rubrics and validated scores (:mod:`.rubrics`), allocation (:mod:`.assignment`), decisions, bonus,
audits, appeals and the ledger (:mod:`.workflow`), bonus calibration (:mod:`.calibration`), the Monte Carlo of
Theorem 1 (:mod:`.game`), KINA Table 5 (:mod:`.metrics`), a simulated round (:mod:`.simround`). The web app for
reviewers is :mod:`.web`; database access is :mod:`.persist`.
"""
