"""Kubernetes label selectors, with the API server's grammar and checks.

The same rules as GRW's own parser (the ``grw-selector`` crate): a selector
GRW accepts is one the API server accepts, and the other way round, and the
error messages say what is wrong and where (0-based character positions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Callable, Mapping

__all__ = ["LabelSelector", "Operator", "Requirement", "SelectorError"]


class SelectorError(ValueError):
    """A selector that does not parse, or names a key or value the API
    server would reject.

    ``str(error)`` is ``invalid label selector `<input>`: <reason>``.
    """

    def __init__(self, input: str, reason: str, position: int):
        super().__init__(f"invalid label selector `{input}`: {reason}")
        #: The selector exactly as given.
        self.input = input
        #: What was wrong and where, without the selector itself.
        self.reason = reason
        #: The 0-based character offset of the problem.
        self.position = position


class Operator(StrEnum):
    """Which test a :class:`Requirement` applies."""

    EQUALS = "="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = ">"
    LESS_THAN = "<"


@dataclass(frozen=True)
class Requirement:
    """One condition on one label.

    ``values`` holds the value of ``=``/``!=`` (one, possibly empty) or the
    set of ``in``/``notin`` (sorted, without duplicates); ``bound`` the
    integer of ``>``/``<``.
    """

    key: str
    operator: Operator
    values: tuple[str, ...] = ()
    bound: int | None = None

    def matches(self, value: str | None) -> bool:
        """Whether the requirement holds for an object whose label
        :attr:`key` has ``value`` (``None``: the object lacks the label)."""
        op = self.operator
        if op is Operator.EQUALS:
            return value is not None and value == self.values[0]
        if op is Operator.NOT_EQUALS:
            return value is None or value != self.values[0]
        if op is Operator.IN:
            return value is not None and value in self.values
        if op is Operator.NOT_IN:
            return value is None or value not in self.values
        if op is Operator.EXISTS:
            return value is not None
        if op is Operator.DOES_NOT_EXIST:
            return value is None
        number = _parse_i64(value) if value is not None else None
        if number is None:
            return False
        assert self.bound is not None
        return number > self.bound if op is Operator.GREATER_THAN else number < self.bound

    def __str__(self) -> str:
        op = self.operator
        if op in (Operator.EQUALS, Operator.NOT_EQUALS):
            return f"{self.key}{op.value}{self.values[0]}"
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({','.join(self.values)})"
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        return f"{self.key}{op.value}{self.bound}"


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector: every requirement must hold.

    ======================  ============================================
    requirement             matches when the label ...
    ======================  ============================================
    ``app=web``, ``==``     is present with that value
    ``app!=web``            is absent or has another value
    ``app in (web,api)``    is present with one of the values
    ``app notin (web,api)`` is absent or has none of the values
    ``app``                 is present
    ``!app``                is absent
    ``n>2``, ``n<10``       is present and an integer above/below it
    ======================  ============================================

    ``str()`` gives the canonical form, which parses back to an equal
    selector. The empty selector matches everything.
    """

    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parses a selector; raises :class:`SelectorError`."""
        return _Parser(text).selector()

    @classmethod
    def everything(cls) -> LabelSelector:
        """The selector that matches everything."""
        return cls()

    @property
    def is_empty(self) -> bool:
        """Whether there are no requirements (so everything matches)."""
        return not self.requirements

    def matches(self, labels: Any) -> bool:
        """Whether ``labels`` satisfy every requirement.

        ``labels`` is a mapping, a list of ``(key, value)`` pairs, or
        anything with a ``label(key)`` method (:class:`~grw_sdk.Event`,
        :class:`~grw_sdk.ObjectView`), which is asked for the selector's
        keys only.
        """
        get = _getter(labels)
        return all(r.matches(get(r.key)) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def _getter(labels: Any) -> Callable[[str], str | None]:
    label = getattr(labels, "label", None)
    if callable(label):
        return label
    if isinstance(labels, Mapping):
        return labels.get
    return dict(labels).get


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_INTEGER = re.compile(r"[+-]?[0-9]+")


def _parse_i64(text: str) -> int | None:
    """``text`` as a base-10 64-bit integer, as Go's ``strconv.ParseInt``
    reads it (an optional sign, ASCII digits), or ``None``."""
    if not _INTEGER.fullmatch(text):
        return None
    number = int(text)
    return number if _I64_MIN <= number <= _I64_MAX else None


# The lexer: whitespace is four characters only, symbols are read greedily,
# and a NUL ends the input where a token would start, or ends the token it
# follows (as the API server's lexer, which stops at a 0 byte, does).

_WHITESPACE = frozenset(" \t\r\n")
_SPECIAL = frozenset("=!(),<>")
_WORD, _END = "word", "end"


@dataclass(frozen=True)
class _Token:
    kind: str  # _WORD, _END or the symbol itself
    text: str
    position: int

    def describe(self) -> str:
        if self.kind == _END:
            return "the end of the selector"
        return f"`{self.text}`"


def _tokenize(text: str) -> list[_Token]:
    tokens = []
    pos, length = 0, len(text)
    while True:
        while pos < length and text[pos] in _WHITESPACE:
            pos += 1
        start = pos
        if pos == length or text[pos] == "\0":
            tokens.append(_Token(_END, "", start))
            return tokens
        first = text[pos]
        if first in _SPECIAL:
            pair = text[pos : pos + 2]
            symbol = pair if pair in ("==", "!=") else first
            pos += len(symbol)
            tokens.append(_Token(symbol, symbol, start))
        else:
            while pos < length and not (
                text[pos] == "\0" or text[pos] in _WHITESPACE or text[pos] in _SPECIAL
            ):
                pos += 1
            tokens.append(_Token(_WORD, text[start:pos], start))
        if pos < length and text[pos] == "\0":
            pos += 1


# Keys and values, as the API server checks label keys and values.

_MAX_NAME = 63
_MAX_PREFIX = 253
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_NAME_CHARS = _ALNUM | frozenset("-_.")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _is_name(text: str) -> bool:
    """Empty, or ASCII letters, digits, ``-``, ``_`` and ``.`` starting and
    ending with a letter or digit."""
    if not text:
        return True
    return text[0] in _ALNUM and text[-1] in _ALNUM and all(c in _NAME_CHARS for c in text)


def _key_problem(key: str) -> str | None:
    name = key
    if "/" in key:
        prefix, _, name = key.partition("/")
        if "/" in name:
            return "a key may contain at most one `/`"
        if not prefix:
            return "the prefix before `/` is empty"
        if len(prefix) > _MAX_PREFIX:
            return f"the prefix before `/` is longer than {_MAX_PREFIX} characters"
        if not all(_DNS_LABEL.fullmatch(part) for part in prefix.split(".")):
            return (
                "the prefix before `/` must be a DNS subdomain: lowercase letters, digits, "
                "`-` and `.`, with each dot-separated part starting and ending with a letter "
                "or digit"
            )
    if not name:
        return "the name is empty"
    if len(name) > _MAX_NAME:
        return f"the name is longer than {_MAX_NAME} characters"
    if not _is_name(name):
        return (
            "the name must consist of letters, digits, `-`, `_` and `.`, and start and end "
            "with a letter or digit"
        )
    return None


def _value_problem(key: str, value: str) -> str | None:
    if len(value) > _MAX_NAME:
        return f"value of `{key}` is longer than {_MAX_NAME} characters"
    if not _is_name(value):
        return (
            f"value `{value}` of `{key}` is not a valid label value: it must consist of "
            "letters, digits, `-`, `_` and `.`, and start and end with a letter or digit"
        )
    return None


_RULE = "for 'Gt', 'Lt' operators, the value must be an integer"


class _Parser:
    """Recursive descent over the token list."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.next = 0

    def peek(self) -> _Token:
        return self.tokens[self.next]

    def bump(self) -> _Token:
        token = self.tokens[self.next]
        if self.next + 1 < len(self.tokens):
            self.next += 1
        return token

    def error(self, position: int, reason: str) -> SelectorError:
        return SelectorError(self.text, reason, position)

    def selector(self) -> LabelSelector:
        token = self.peek()
        if token.kind == _END:
            return LabelSelector()
        if token.kind == ",":
            raise self.error(
                token.position,
                f"empty requirement at position {token.position}: expected a label key before `,`",
            )
        if token.kind not in (_WORD, "!"):
            raise self.error(
                token.position,
                f"expected a label key or `!` at position {token.position}, found {token.describe()}",
            )
        requirements = []
        while True:
            requirements.append(self.requirement())
            token = self.bump()
            at = token.position
            if token.kind == _END:
                return LabelSelector(tuple(requirements))
            if token.kind == ",":
                following = self.peek()
                fat = following.position
                if following.kind in (_WORD, "!"):
                    continue
                if following.kind == _END:
                    raise self.error(
                        at, f"trailing `,` at position {at}: expected another requirement after it"
                    )
                if following.kind == ",":
                    raise self.error(
                        fat, f"empty requirement at position {fat}: expected a label key before `,`"
                    )
                raise self.error(
                    fat,
                    f"expected a label key or `!` after `,` at position {fat}, "
                    f"found {following.describe()}",
                )
            if token.kind == ")":
                raise self.error(at, f"unmatched `)` at position {at}: there is no `(` to close")
            raise self.error(
                at,
                f"unexpected {token.describe()} at position {at}: "
                "expected `,` or the end of the selector",
            )

    def requirement(self) -> Requirement:
        token = self.bump()
        if token.kind == "!":
            key_token = self.bump()
            if key_token.kind != _WORD:
                raise self.error(
                    key_token.position,
                    f"expected a label key after `!` at position {key_token.position}, "
                    f"found {key_token.describe()}",
                )
            key = self.check_key(key_token)
            following = self.peek()
            if following.kind in (",", _END):
                return Requirement(key, Operator.DOES_NOT_EXIST)
            raise self.error(
                following.position,
                f"`!{key}` only tests that the label is absent and takes no operator or value, "
                f"but found {following.describe()} at position {following.position}",
            )
        if token.kind == _WORD:
            return self.operator(self.check_key(token))
        raise self.error(
            token.position,
            f"expected a label key at position {token.position}, found {token.describe()}",
        )

    def operator(self, key: str) -> Requirement:
        token = self.peek()
        at = token.position
        if token.kind in (",", _END):
            return Requirement(key, Operator.EXISTS)
        if token.kind in ("=", "==", "!="):
            self.bump()
            value, value_at = self.exact_value(token)
            self.check_value(key, value, value_at)
            operator = Operator.NOT_EQUALS if token.kind == "!=" else Operator.EQUALS
            return Requirement(key, operator, (value,))
        if token.kind in (">", "<"):
            self.bump()
            text, value_at = self.exact_value(token)
            bound = self.integer(key, token, text, value_at)
            self.check_bound(key, token, text, value_at)
            operator = Operator.GREATER_THAN if token.kind == ">" else Operator.LESS_THAN
            return Requirement(key, operator, bound=bound)
        if token.kind == _WORD and token.text in ("in", "notin"):
            self.bump()
            values = set()
            for value, value_at in self.value_set(token.text):
                self.check_value(key, value, value_at)
                values.add(value)
            operator = Operator.IN if token.text == "in" else Operator.NOT_IN
            return Requirement(key, operator, tuple(sorted(values)))
        if token.kind == _WORD and token.text in ("gt", "lt"):
            symbol = ">" if token.text == "gt" else "<"
            raise self.error(
                at,
                f"`{token.text}` at position {at} is not an operator: write `{key}{symbol}N` "
                f"to compare `{key}` with the integer N",
            )
        raise self.error(
            at,
            f"expected an operator after key `{key}` at position {at}, found {token.describe()}: "
            "use `=`, `==`, `!=`, `in`, `notin`, `>`, `<`, or `,` to start the next requirement",
        )

    def exact_value(self, operator: _Token) -> tuple[str, int]:
        """The value after ``=``, ``==``, ``!=``, ``>`` or ``<``; left out
        (followed by ``,`` or the end), it is the empty value."""
        token = self.peek()
        if token.kind in (",", _END):
            return "", token.position
        if token.kind == _WORD:
            self.bump()
            return token.text, token.position
        raise self.error(
            token.position,
            f"expected a value after {operator.describe()} at position {token.position}, "
            f"found {token.describe()}",
        )

    def value_set(self, operator: str) -> list[tuple[str, int]]:
        """The parenthesised values after ``in``/``notin``; an item left out
        is the empty value, and ``()`` holds only the empty value."""
        open_token = self.bump()
        if open_token.kind != "(":
            raise self.error(
                open_token.position,
                f"expected `(` after `{operator}` at position {open_token.position}, "
                f"found {open_token.describe()}",
            )
        opened = open_token.position
        unclosed = self.error(opened, f"missing `)` to close the `(` at position {opened}")
        values = []
        while True:
            token = self.peek()
            if token.kind == _WORD:
                self.bump()
                values.append((token.text, token.position))
            elif token.kind in (",", ")"):
                values.append(("", token.position))
            elif token.kind == _END:
                raise unclosed
            else:
                raise self.error(
                    token.position,
                    f"expected a value, `,` or `)` at position {token.position}, "
                    f"found {token.describe()}",
                )
            token = self.bump()
            if token.kind == ",":
                continue
            if token.kind == ")":
                return values
            if token.kind == _END:
                raise unclosed
            raise self.error(
                token.position,
                f"expected `,` or `)` at position {token.position}, found {token.describe()}",
            )

    def check_key(self, token: _Token) -> str:
        problem = _key_problem(token.text)
        if problem is not None:
            raise self.error(
                token.position,
                f"key `{token.text}` is not a valid label key: {problem} "
                f"(at position {token.position})",
            )
        return token.text

    def check_value(self, key: str, value: str, at: int) -> None:
        problem = _value_problem(key, value)
        if problem is not None:
            raise self.error(at, f"{problem} (at position {at})")

    def integer(self, key: str, operator: _Token, text: str, at: int) -> int:
        number = _parse_i64(text)
        if number is not None:
            return number
        symbol = operator.describe()
        if not text:
            reason = f"missing value after {symbol} at position {at}: {_RULE}"
        elif _INTEGER.fullmatch(text):
            reason = (
                f"value `{text}` of `{key}` after {symbol} (at position {at}) is out of range: "
                f"{_RULE} from {_I64_MIN} to {_I64_MAX}"
            )
        else:
            reason = f"value `{text}` of `{key}` after {symbol} (at position {at}) is not a number: {_RULE}"
        raise self.error(at, reason)

    def check_bound(self, key: str, operator: _Token, text: str, at: int) -> None:
        """The bound of ``>``/``<`` must be a valid label value too, so it
        cannot carry a sign."""
        problem = _value_problem(key, text)
        if problem is not None:
            hint = (
                f", so the bound of {operator.describe()} cannot have a sign"
                if text.startswith(("+", "-"))
                else ""
            )
            raise self.error(at, f"{problem}{hint} (at position {at})")

