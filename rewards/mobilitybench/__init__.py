"""MobilityBench-v0's scoring: the paper's metrics (:mod:`.metrics`), the claim-by-claim verdict behind DR and FPR
(:mod:`.verify`, :mod:`.verify_route`, :mod:`.claims`, :mod:`.evidence`), reward shaping (:mod:`.shaping`), the
default scorer (:mod:`.scorer`), the scorecard, report, failing checks and the gold audit."""
