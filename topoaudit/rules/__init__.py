"""The judge: rules over the facts of one audit, each returning findings (or a Skipped when it cannot run).

A rule is a function ``(ctx: RuleContext) -> Iterable[Finding | Skipped]`` (:mod:`topoaudit.rules.base`),
declared with the codes it raises and the facts it needs (:mod:`topoaudit.rules.registry`); the modules that
declare rules are listed in :mod:`topoaudit.rules.families`, the codes collected in :mod:`topoaudit.rules.codes`.
"""
