"""Plugin configuration, with errors that name the offending key."""

from __future__ import annotations

import builtins
import json
from typing import Any, Iterable, Mapping

from .model import FieldPath
from .selector import LabelSelector, SelectorError

__all__ = ["Config", "ConfigError"]


class ConfigError(ValueError):
    """A configuration the plugin rejects. Raised from a plugin's
    constructor, its message is what the operator sees."""


def describe(value: Any) -> str:
    """A JSON value as error messages name it: ``integer `3```,
    ``string "x"``, ``map``, ..."""
    if value is None:
        return "null"
    if isinstance(value, builtins.bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, builtins.int):
        return f"integer `{value}`"
    if isinstance(value, builtins.float):
        return f"floating point `{value!r}`"
    if isinstance(value, builtins.str):
        return f"string {json.dumps(value, ensure_ascii=False)}"
    if isinstance(value, builtins.list):
        return "sequence"
    return "map"


class Config:
    """A plugin's configuration (the manifest's ``config``), read key by key.

    Each accessor names the key it reads, checks its type and returns its
    value (or the default when the key is absent or ``null``); a bad value
    raises :class:`ConfigError` naming the key::

        config = Config('{"min": -1}')
        config.int("min", default=1, minimum=0)
        # ConfigError: config key `min`: must be at least 0

    After the plugin read what it takes, :meth:`done` rejects any other key
    (the export adapters and :func:`grw_sdk.instantiate` call it)::

        unknown config key `mn`; accepted: min

    Empty text counts as ``{}``.
    """

    def __init__(self, text: str | Mapping[str, Any] | None = None, *, _path: str = ""):
        self._path = _path
        self._accepted: dict[str, None] = {}
        self._children: list[Config] = []
        if text is None or (isinstance(text, builtins.str) and not text.strip()):
            value: Any = {}
        elif isinstance(text, builtins.str):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as e:
                raise ConfigError(f"config is not valid JSON: {e}") from None
        else:
            value = text
        if not isinstance(value, Mapping):
            where = f"config key `{_path}`" if _path else "config is not valid"
            raise ConfigError(f"{where}: invalid type: {describe(value)}, expected a JSON object")
        self._value = dict(value)

    @property
    def value(self) -> dict[str, Any]:
        """The whole configuration as parsed JSON."""
        return self._value

    def __contains__(self, key: str) -> bool:
        return key in self._value

    def path(self, key: str) -> str:
        """How error messages name ``key``: ``url``, ``kinds[0].group``."""
        return f"{self._path}.{key}" if self._path else key

    def error(self, key: str, message: str) -> ConfigError:
        """An error about ``key``: ``config key `key`: message``. Raise it
        from a plugin's own checks."""
        return ConfigError(f"config key `{self.path(key)}`: {message}")

    def _take(self, key: str, required: builtins.bool) -> Any:
        self._accepted[key] = None
        value = self._value.get(key)
        if value is None and required:
            if key in self._value:
                return None
            where = f"config key `{self._path}`" if self._path else "config is not valid"
            raise ConfigError(f"{where}: missing field `{key}`")
        return value

    def _mismatch(self, key: str, value: Any, expected: str) -> ConfigError:
        return self.error(key, f"invalid type: {describe(value)}, expected {expected}")

    def get(self, key: str, default: Any = None, *, required: builtins.bool = False) -> Any:
        """The value of ``key`` as parsed JSON, unchecked."""
        value = self._take(key, required)
        return default if value is None else value

    def str(
        self,
        key: str,
        default: builtins.str | None = None,
        *,
        required: builtins.bool = False,
        choices: Iterable[builtins.str] | None = None,
    ) -> builtins.str | None:
        """A string; with ``choices``, one of them."""
        value = self._take(key, required)
        if value is None and not required:
            return default
        if not isinstance(value, builtins.str):
            raise self._mismatch(key, value, "a string")
        if choices is not None:
            choices = builtins.list(choices)
            if value not in choices:
                listed = ", ".join(f"`{c}`" for c in choices)
                raise self.error(key, f"unknown value `{value}`, expected one of {listed}")
        return value

    def int(
        self,
        key: str,
        default: builtins.int | None = None,
        *,
        required: builtins.bool = False,
        minimum: builtins.int | None = None,
        maximum: builtins.int | None = None,
    ) -> builtins.int | None:
        """An integer (``3``, not ``3.0`` or ``"3"``), within the bounds given."""
        value = self._take(key, required)
        if value is None and not required:
            return default
        if isinstance(value, builtins.bool) or not isinstance(value, builtins.int):
            raise self._mismatch(key, value, "an integer")
        if minimum is not None and value < minimum:
            raise self.error(key, f"must be at least {minimum}")
        if maximum is not None and value > maximum:
            raise self.error(key, f"must be at most {maximum}")
        return value

    def number(
        self,
        key: str,
        default: builtins.float | None = None,
        *,
        required: builtins.bool = False,
        minimum: builtins.float | None = None,
        maximum: builtins.float | None = None,
    ) -> builtins.float | None:
        """A number, integer or not, within the bounds given."""
        value = self._take(key, required)
        if value is None and not required:
            return default
        if isinstance(value, builtins.bool) or not isinstance(value, (builtins.int, builtins.float)):
            raise self._mismatch(key, value, "a number")
        if minimum is not None and value < minimum:
            raise self.error(key, f"must be at least {minimum}")
        if maximum is not None and value > maximum:
            raise self.error(key, f"must be at most {maximum}")
        return value

    def bool(
        self, key: str, default: builtins.bool | None = None, *, required: builtins.bool = False
    ) -> builtins.bool | None:
        """``true`` or ``false``."""
        value = self._take(key, required)
        if value is None and not required:
            return default
        if not isinstance(value, builtins.bool):
            raise self._mismatch(key, value, "a boolean")
        return value

    def _list(self, key: str, required: builtins.bool) -> builtins.list | None:
        value = self._take(key, required)
        if value is None and not required:
            return None
        if not isinstance(value, builtins.list):
            raise self._mismatch(key, value, "a list")
        return value

    def list_of_str(
        self,
        key: str,
        default: Iterable[builtins.str] | None = None,
        *,
        required: builtins.bool = False,
    ) -> builtins.list[builtins.str] | None:
        """A list of strings."""
        items = self._list(key, required)
        if items is None:
            return None if default is None else builtins.list(default)
        for i, item in enumerate(items):
            if not isinstance(item, builtins.str):
                raise self._mismatch(f"{key}[{i}]", item, "a string")
        return builtins.list(items)

    def field_path(
        self, key: str, default: builtins.str | None = None, *, required: builtins.bool = False
    ) -> FieldPath | None:
        """A :class:`~grw_sdk.FieldPath`, dotted or a JSON pointer."""
        text = self.str(key, required=required)
        if text is None:
            return None if default is None else FieldPath(default)
        try:
            return FieldPath(text)
        except ValueError as e:
            raise self.error(key, builtins.str(e)) from None

    def list_of_field_paths(
        self,
        key: str,
        default: Iterable[builtins.str] | None = None,
        *,
        required: builtins.bool = False,
    ) -> builtins.list[FieldPath] | None:
        """A list of :class:`~grw_sdk.FieldPath`."""
        texts = self.list_of_str(key, required=required)
        if texts is None:
            return None if default is None else [FieldPath(t) for t in default]
        paths = []
        for i, text in enumerate(texts):
            try:
                paths.append(FieldPath(text))
            except ValueError as e:
                raise self.error(f"{key}[{i}]", builtins.str(e)) from None
        return paths

    def selector(
        self, key: str, default: builtins.str = "", *, required: builtins.bool = False
    ) -> LabelSelector:
        """A :class:`~grw_sdk.LabelSelector`; absent, ``default``."""
        text = self.str(key, default, required=required)
        try:
            return LabelSelector.parse(text or "")
        except SelectorError as e:
            raise self.error(key, builtins.str(e)) from None

    def section(self, key: str, *, required: builtins.bool = False) -> Config:
        """A nested object, read as a :class:`Config` of its own (empty when
        absent); its keys are named ``key.inner`` in errors."""
        value = self._take(key, required)
        child = Config(value if value is not None else {}, _path=self.path(key))
        self._children.append(child)
        return child

    def list_of_sections(
        self, key: str, *, required: builtins.bool = False
    ) -> builtins.list[Config]:
        """A list of objects, each read as a :class:`Config` of its own (named
        ``key[0]``, ``key[0].inner`` in errors); absent, an empty list."""
        children = []
        for i, item in enumerate(self._list(key, required) or []):
            if not isinstance(item, Mapping):
                raise self._mismatch(f"{key}[{i}]", item, "a JSON object")
            children.append(Config(item, _path=f"{self.path(key)}[{i}]"))
        self._children.extend(children)
        return children

    def done(self) -> None:
        """Rejects keys the plugin did not read (here and in the sections it
        read), naming them and the keys it takes."""
        unknown = [key for key in self._value if key not in self._accepted]
        if unknown:
            names = ", ".join(f"`{self.path(k)}`" for k in unknown)
            noun = "key" if len(unknown) == 1 else "keys"
            if self._accepted:
                raise ConfigError(
                    f"unknown config {noun} {names}; accepted: {', '.join(self._accepted)}"
                )
            where = f"`{self._path}` takes" if self._path else "the plugin takes"
            raise ConfigError(f"unknown config {noun} {names}; {where} no keys")
        for child in self._children:
            child.done()
