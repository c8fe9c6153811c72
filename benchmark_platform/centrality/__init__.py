"""Support centrality under domain alignment (KINA Appendix B): signatures, calibrated alignment, reference bank,
neighbourhoods, pair scores, C_d with bootstrap lower quantiles, the shortlist and the selection problem."""
