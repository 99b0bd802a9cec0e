"""Every rule, from every family, in one registry: declared where it is written, run once by the judge.

A rule is a function ``(ctx: RuleContext) -> Iterable[Finding | Skipped]`` decorated with :func:`rule`, which
declares the codes it raises (a :class:`~topoaudit.rules.codes.Code`, or the name of one declared elsewhere)
and the facts it needs (:mod:`topoaudit.rules.needs`). Its docstring documents its codes.

The modules that declare rules are listed in :mod:`topoaudit.rules.families`, in the order their findings are
shown; the judge loads only those whose facts the input holds (:func:`rules_for`), everything that lists codes
or rules (the docs, JUnit, policies) loads them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from topoaudit.model.finding import Finding, Severity, Skipped
from topoaudit.rules.codes import CODES, Code, declare_code
from topoaudit.rules.families import FAMILIES, load, load_all
from topoaudit.rules.needs import Need, covered, first_missing

if TYPE_CHECKING:
    from topoaudit.rules.base import RuleContext

RuleFunction = Callable[["RuleContext"], Iterable["Finding | Skipped"]]
F = TypeVar("F", bound=RuleFunction)


@dataclass(frozen=True)
class Rule:
    """A registered rule: the function, the codes it may raise, and every fact it needs."""

    function: RuleFunction
    codes: tuple[str, ...]
    needs: tuple[Need, ...]
    module: str
    fallback: bool = False  # its findings stand only for codes no other rule raised on the same input

    @property
    def name(self) -> str:
        """The function's name, as a listing shows it."""
        return getattr(self.function, "__name__", repr(self.function))

    def missing(self, ctx: RuleContext) -> str:
        """Why this rule cannot run on ``ctx`` ("" when the input holds everything it needs)."""
        return first_missing(self.needs, ctx)


_RULES: list[Rule] = []
_IN_ORDER: list[tuple[Rule, ...]] = []  # _RULES in display order, made again when a rule is registered


def register_rule(
    function: RuleFunction, codes: Iterable[str], needs: Iterable[Need] = (), *, fallback: bool = False
) -> Rule:
    """Register ``function`` as raising ``codes`` (declared already) when the input holds ``needs``.

    The decorator's door, and a data file's: a catalog of signatures registers the one rule that matches them. A
    ``fallback`` rule's finding of a code gives way to another rule's finding of that code: a known message read
    on a line defers to the rule that judged the same line's facts (one finding per code, its owner's).
    """
    entry = Rule(function, tuple(codes), tuple(needs), getattr(function, "__module__", ""), fallback)
    known = next((i for i, r in enumerate(_RULES) if _same_function(r.function, function)), None)
    if known is None:
        _RULES.append(entry)
    else:  # a module imported again (importlib.reload): the new function takes the old one's place
        _RULES[known] = entry
    _IN_ORDER.clear()
    return entry


def _same_function(a: RuleFunction, b: RuleFunction) -> bool:
    return (getattr(a, "__module__", ""), getattr(a, "__qualname__", "")) == (
        getattr(b, "__module__", ""),
        getattr(b, "__qualname__", ""),
    )


def rule(*codes: Code | str, needs: Iterable[Need] = ()) -> Callable[[F], F]:
    """Declare a rule: the codes it raises (a Code declares one, a name refers to one declared elsewhere).

    A declared code's documentation is the rule's docstring unless the Code gives its own.
    """

    def decorate(function: F) -> F:
        names = [_declare(code, function).code if isinstance(code, Code) else code for code in codes]
        register_rule(function, names, needs)
        return function

    return decorate


G = TypeVar("G", bound=Callable[..., object])


def declares(*codes: Code, needs: Iterable[Need] = ()) -> Callable[[G], G]:
    """Declare the codes a function outside a node's rule run raises (the fleet's, comparing many reports).

    Its docstring documents them; ``needs`` is what they are judged from, so a node's JUnit says why not.
    """

    def decorate(function: G) -> G:
        for code in codes:
            _declare(replace(code, needs=code.needs or tuple(needs)), function)
        return function

    return decorate


def _declare(code: Code, function: Callable[..., object]) -> Code:
    doc = code.doc or _docstring(function)
    return declare_code(replace(code, doc=doc, declared_in=getattr(function, "__module__", "")))


def _docstring(function: Callable[..., object]) -> str:
    import inspect

    return inspect.cleandoc(function.__doc__ or "")


def rules() -> tuple[Rule, ...]:
    """Every registered rule, in display order (the order of :data:`FAMILIES`, then of definition)."""
    load_all()
    return _ordered()


def _ordered() -> tuple[Rule, ...]:
    if not _IN_ORDER:
        rank = {f.module: i for i, f in enumerate(FAMILIES)}
        _IN_ORDER.append(tuple(sorted(_RULES, key=lambda r: rank.get(r.module, len(rank)))))
    return _IN_ORDER[0]


def codes_raised_in(module: str) -> frozenset[str]:
    """Every code the rules of ``module`` may raise (a family's codes, as the docs group them)."""
    return frozenset(code for r in rules() if r.module == module for code in r.codes)


def rules_for(ctx: RuleContext) -> Iterator[Rule]:
    """Yield the rules with something to judge in ``ctx``, loading only the families whose facts it holds."""
    load(f for f in FAMILIES if not first_missing(f.needs, ctx))
    for entry in _ordered():
        if not entry.missing(ctx):
            yield entry


class Undeclared(RuntimeError):
    """A rule raised a code, or a command, it does not declare: a bug, so the judge stops rather than mislabel it."""


def run_rules(ctx: RuleContext) -> tuple[tuple[Finding, ...], tuple[Skipped, ...]]:
    """Run every rule with something to judge, once; findings in rule order, then skipped rules.

    A fallback rule's findings come last, and those of a code another rule raised are left out, unless the
    fallback's is a failure the others are not: the log's rule judges NCCL_SOCKET_IFNAME as a setting (info), a
    known message says it matches no interface, so NCCL could not start (fail).
    """
    findings: list[Finding] = []
    fallbacks: list[Finding] = []
    skipped: list[Skipped] = []
    for entry in rules_for(ctx):
        for item in entry.function(ctx):
            if isinstance(item, Finding):
                _check_declared(entry, item)
                (fallbacks if entry.fallback else findings).append(item)
            else:
                skipped.append(item)
    raised = {f.code for f in findings}
    failed = {f.code for f in findings if f.severity == Severity.FAIL}
    findings += (f for f in fallbacks if f.code not in raised or (f.severity == Severity.FAIL and f.code not in failed))
    return tuple(findings), tuple(skipped)


def coverage(ctx: RuleContext) -> tuple[str, ...]:
    """Return the evidence the rules that run on ``ctx`` examine, each named once, in rule order."""
    seen: dict[str, None] = {}
    for entry in rules_for(ctx):
        seen.update(dict.fromkeys(covered(entry.needs, ctx)))
    return tuple(seen)


def _check_declared(entry: Rule, found: Finding) -> None:
    where = f"rule {entry.module}.{entry.name}"
    if found.code not in entry.codes:
        raise Undeclared(f"{where} raised undeclared code {found.code!r}")
    actions = CODES[found.code].remedy_actions
    for command in found.remedy_commands:
        if command.action not in actions:
            raise Undeclared(f"{where} carries a command {command.action!r}, which {found.code} does not declare")


def judgement(code: str, ctx: RuleContext) -> str:
    """Whether ``code`` was judged on ``ctx``: "" when a rule raising it could run, else why none could."""
    own = CODES[code].needs if code in CODES else ()
    raising = [r for r in rules() if code in r.codes]
    raising = [r for r in raising if not r.fallback] or raising  # a known message's absence judges nothing
    reasons = [first_missing((*own, *r.needs), ctx) for r in raising] or [first_missing(own, ctx)]
    return "" if "" in reasons else reasons[0]
