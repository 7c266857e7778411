-- Per-kind judge weights fitted from the owner's accept/dismiss history (daemon/calibrate.py).
-- One row per kind; absent: the documented priors (daemon/judge_kinds.py PRIORS) apply.
CREATE TABLE IF NOT EXISTS judge_weights (
    kind VARCHAR PRIMARY KEY,
    bias DOUBLE NOT NULL,
    weights VARCHAR NOT NULL,      -- JSON {feature: weight}
    examples INTEGER NOT NULL,     -- proposals with a verdict the fit used
    accepted INTEGER NOT NULL,
    fitted_at TIMESTAMP NOT NULL
);
