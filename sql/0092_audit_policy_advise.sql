-- Issue 31: a critical failure of an agent the gold-label calibration made advisory (kappa under the threshold)
-- no longer drops the item; the policy records it as an 'advise' action (a note with the agent and its kappa).
ALTER TABLE audit_policy DROP CONSTRAINT audit_policy_action_check;
ALTER TABLE audit_policy ADD CONSTRAINT audit_policy_action_check
    CHECK (action IN ('drop', 'relabel', 'disclose', 'advise'));
