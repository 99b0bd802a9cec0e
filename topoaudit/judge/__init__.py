"""The judge layer above the rules: the policy step, the deploy plan's finding and the gate.

The rules (:mod:`topoaudit.rules`) turn the model into findings; :mod:`topoaudit.judge.policy` applies a
policy's expectations, severity overrides and ignores; :mod:`topoaudit.judge.gate` turns the findings into
the verdict and exit code. The pipeline calls each once.
"""
