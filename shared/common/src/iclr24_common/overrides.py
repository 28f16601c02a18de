"""Preset overrides from the command line: ``preset_option`` (a package's friendly option for
a field), ``--set FIELD=VALUE`` parsed by the field's annotated type (:func:`coerce`), and
:func:`replace_field`, ``dataclasses.replace`` along a dotted path (the preset's
``__post_init__`` validates the result). :func:`assign_field` and :func:`validate` let the app
apply several assignments first and validate once, so that their order does not matter
(``--set a=3 --set b=3`` where the preset requires ``a <= b``)."""

from __future__ import annotations

import argparse
import copy
import dataclasses
import types
import typing
from typing import Any

from .errors import UsageError

PRESET_DEST = "preset:"  # argparse dests that name a preset field


def preset_option(parser: argparse.ArgumentParser, *flags: str, field: str, **kw: Any) -> None:
    """An option that overrides the preset field ``field`` (dotted for nested dataclasses,
    e.g. ``train.epochs``). Unset, it leaves the preset alone; set, the app applies it with
    ``dataclasses.replace`` and the preset's ``__post_init__`` validates it."""
    kw.setdefault("default", None)
    kw["help"] = f"{kw.get('help', '')} (preset field {field})".strip()
    parser.add_argument(*flags, dest=PRESET_DEST + field, **kw)


def replace_field(obj: Any, dotted: str, value: Any) -> Any:
    """``dataclasses.replace`` along a dotted path, checked at once (:func:`assign_field`, then
    :func:`validate`); unknown fields and rejected values are a :class:`UsageError`."""
    return validate(assign_field(obj, dotted, value), f"{dotted}={value!r}")


def assign_field(obj: Any, dotted: str, value: Any) -> Any:
    """A copy of ``obj`` with the (dotted) field set, without running ``__post_init__``: the
    caller validates once with :func:`validate` after all its assignments."""
    head, _, rest = dotted.partition(".")
    names = {f.name for f in dataclasses.fields(obj)}
    if head not in names:
        raise UsageError(
            f"unknown preset field {dotted!r}; fields: {', '.join(sorted(names))} "
            "(see --print-config)"
        )
    if rest:
        value = assign_field(getattr(obj, head), rest, value)
    new = copy.copy(obj)
    object.__setattr__(new, head, value)  # frozen dataclasses too
    return new


def validate(obj: Any, what: str = "") -> Any:
    """Rebuild ``obj`` (nested dataclasses first) so that every ``__post_init__`` checks the
    final values; a rejected value is a :class:`UsageError` naming ``what`` was applied."""
    changes = {
        f.name: validate(getattr(obj, f.name), what)
        for f in dataclasses.fields(obj)
        if f.init and dataclasses.is_dataclass(getattr(obj, f.name))
    }
    try:
        return dataclasses.replace(obj, **changes)
    except (ValueError, TypeError) as e:
        raise UsageError(f"{what}: {e}" if what else str(e)) from None


def field_type(obj: Any, dotted: str) -> Any:
    """The annotated type of a (dotted) preset field."""
    head, _, rest = dotted.partition(".")
    if rest:
        return field_type(getattr(obj, head), rest)
    hints = typing.get_type_hints(type(obj))
    if head not in hints:
        replace_field(obj, head, None)  # raises the unknown-field error
    return hints[head]


def coerce(text: str, hint: Any) -> Any:
    """Parse ``text`` as a value of the type ``hint`` (int, float, bool, str, Optional,
    Literal, tuple/list of those)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if text.strip().lower() in ("none", "null") and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return coerce(text, a)
            except (ValueError, TypeError) as e:
                errors.append(str(e))
        raise ValueError("; ".join(errors))
    if origin is typing.Literal:
        for a in args:
            if str(a) == text:
                return a
        raise ValueError(f"must be one of {', '.join(map(str, args))}")
    if origin in (tuple, list):
        parts = [t for t in text.replace(" ", ",").split(",") if t]
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(parts) != len(args):
                raise ValueError(f"needs {len(args)} comma-separated values")
            return tuple(coerce(t, a) for t, a in zip(parts, args))
        vals = [coerce(t, args[0]) if args else t for t in parts]
        return tuple(vals) if origin is tuple else vals
    if hint is bool:
        low = text.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"not a boolean: {text!r}")
    if hint in (int, float, str):
        try:
            return hint(text)
        except ValueError:
            raise ValueError(f"not a {hint.__name__}: {text!r}") from None
    if dataclasses.is_dataclass(hint):
        raise ValueError("is a group of fields: set them one by one with dots (field.sub=value)")
    raise ValueError(f"cannot be set from the command line (type {hint})")
